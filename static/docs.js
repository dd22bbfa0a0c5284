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

// Swagger UI renders controls that assistive technology cannot use well: an
// operation's summary is a button holding a link (interactive inside
// interactive), and the server choice is a select without a name. Mend each
// as Swagger UI (re)renders them; the address still follows the open
// operation, as deepLinking keeps it.
function mend(root) {
  root.querySelectorAll(".opblock-summary-control a[href]").forEach(function (a) {
    a.removeAttribute("href");
  });
  root.querySelectorAll("select#servers:not([aria-label])").forEach(function (s) {
    s.setAttribute("aria-label", "Server");
  });
}
new MutationObserver(function () { mend(document); }).observe(document.getElementById("swagger-ui"), { childList: true, subtree: true });
