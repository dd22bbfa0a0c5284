package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/views"
)

// assets serves the embedded static files under names that carry a hash of
// their content, so browsers may keep them for a year and still get every
// change at once: a changed file has a new name.
type assets struct {
	urls  map[string]string // "app.css" → "/static/app.1a2b3c4d5e6f.css"
	files map[string]asset  // "app.1a2b3c4d5e6f.css" → the file
}

type asset struct {
	contentType string
	body        []byte
	// gz is the body gzipped, or nil when that is not smaller. It is made on
	// first use: compressing a large file (Swagger UI's bundle) at every
	// start, and in every test server, costs seconds.
	gz func() []byte
}

func newAssets(fsys fs.FS) (*assets, error) {
	as := &assets{urls: map[string]string{}, files: map[string]asset{}}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		ext := path.Ext(name)
		hashed := strings.TrimSuffix(name, ext) + "." + hex.EncodeToString(sum[:6]) + ext
		a := asset{contentType: mime.TypeByExtension(ext), body: body, gz: sync.OnceValue(func() []byte { return gzipped(body) })}
		if a.contentType == "" {
			a.contentType = "text/plain; charset=utf-8"
		}
		as.urls[name] = "/static/" + hashed
		as.files[hashed] = a
		return nil
	})
	return as, err
}

// gzipped is body compressed, or nil when that is not smaller.
func gzipped(body []byte) []byte {
	var gz bytes.Buffer
	w, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	w.Write(body)
	w.Close()
	if gz.Len() >= len(body) {
		return nil
	}
	return gz.Bytes()
}

// views returns the URLs every page loads.
func (as *assets) views() views.Assets {
	return views.Assets{CSS: as.urls["app.css"], HTMX: as.urls["htmx.min.js"], JS: as.urls["app.js"], Icon: as.urls["favicon.svg"],
		NavCSS: as.urls["nav.css"]}
}

// serve answers GET /static/:name.
func (as *assets) serve(c echo.Context) error {
	a, ok := as.files[c.Param("name")]
	if !ok {
		return echo.ErrNotFound
	}
	h := c.Response().Header()
	h.Set(echo.HeaderCacheControl, "public, max-age=31536000, immutable")
	h.Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
	if strings.Contains(c.Request().Header.Get(echo.HeaderAcceptEncoding), "gzip") {
		if gz := a.gz(); gz != nil {
			h.Set(echo.HeaderContentEncoding, "gzip")
			return c.Blob(http.StatusOK, a.contentType, gz)
		}
	}
	return c.Blob(http.StatusOK, a.contentType, a.body)
}
