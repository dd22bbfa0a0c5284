// Package static holds the admin pages' stylesheet, scripts and images. They
// are embedded in the binary and served under content-hashed names.
//
// htmx.min.js is htmx 2.0.11 from npm (npm pack htmx.org@2.0.11, dist/htmx.min.js),
// vendored unchanged; htmx.LICENSE is its licence.
//
// swagger-ui-bundle.js and swagger-ui.css are Swagger UI 5.35.0 from npm (npm
// pack swagger-ui-dist@5.35.0), vendored unchanged, for the API reference at
// /docs (docs.js starts it, docs.css frames it); swagger-ui.LICENSE is its
// licence, notice and the notices of what its bundle contains.
package static

import "embed"

// FS holds every static file.
//
//go:embed *.css *.js *.svg htmx.LICENSE swagger-ui.LICENSE
var FS embed.FS
