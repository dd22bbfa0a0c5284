// docs.js starts the API reference at /docs: Swagger UI (vendored in
// swagger-ui-bundle.js) renders the OpenAPI document the API serves. It is a
// file, not an inline script, because the Content-Security-Policy allows none.
"use strict";
window.ui = SwaggerUIBundle({
  url: "/api/v1/openapi.json",
  dom_id: "#swagger-ui",
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
  deepLinking: true,
  // No call to the public validator service: this page talks only to this server.
  validatorUrl: null,
  defaultModelsExpandDepth: 0,
  docExpansion: "list",
  filter: true,
  // "Try it out" sends requests with the credentials given under "Authorize".
  persistAuthorization: false,
});
