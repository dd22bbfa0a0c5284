package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/views"
)

// apiReference serves /docs, the readable API reference. It is public, like
// the OpenAPI document it renders.
func (p *pages) apiReference(c echo.Context) error {
	u := p.assets.urls
	return render(c, http.StatusOK, views.APIReferencePage(views.APIReference{
		Icon: u["favicon.svg"], CSS: u["docs.css"], SwaggerCSS: u["swagger-ui.css"], SwaggerJS: u["swagger-ui-bundle.js"],
		JS: u["docs.js"], DocumentURL: "/api/v1/openapi.json",
	}))
}
