// Package static holds the admin pages' stylesheet, scripts and images. They
// are embedded in the binary and served under content-hashed names.
//
// htmx.min.js is htmx 2.0.11 from npm (npm pack htmx.org@2.0.11, dist/htmx.min.js),
// vendored unchanged; htmx.LICENSE is its licence.
package static

import "embed"

// FS holds every static file.
//
//go:embed *.css *.js *.svg htmx.LICENSE
var FS embed.FS
