package api

import (
	"context"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagsascode"
	"github.com/bunting-flags/bunting/web/httpx"
)

// Flags as code: an environment's (or a project's) flags and segments as
// one document, and a document applied to an environment (the store's
// export.go and import.go say what they hold and do).

// MaxImportBytes bounds an imported file: an environment of a couple of
// thousand flags. bunting import refuses a larger file before sending it.
const MaxImportBytes = 4 << 20

// MaxYAMLImportBytes bounds an imported file in YAML, whose decoding costs
// up to flagstore.YAMLFactor times its size (a thousand flags or so);
// bunting import sends YAML files as JSON, so its files may be larger.
const MaxYAMLImportBytes = 1 << 20

// importParams are the query parameters an import reads.
var importParams = []string{"dryRun", "comment", "reason", "reviewers"}

// mimeYAML is the media type of a YAML document (RFC 9512).
const mimeYAML = "application/yaml"

// exportFormat reads ?format: json (the default: the API's envelope around
// the document) or yaml (the document alone, as a file).
func exportFormat(c echo.Context) (string, error) {
	switch f := query(c, "format"); f {
	case "", flagsascode.FormatJSON:
		return flagsascode.FormatJSON, nil
	case flagsascode.FormatYAML:
		return f, nil
	}
	return "", core.Invalid("format_is_invalid")
}

// writeDocument answers an export: in the envelope as JSON, or as YAML text.
func writeDocument(c echo.Context, format string, doc any) error {
	if format == flagsascode.FormatJSON {
		return respond(c, doc, nil)
	}
	text, err := flagsascode.EncodeDocument(doc, format)
	if err != nil {
		return err
	}
	return c.Blob(http.StatusOK, mimeYAML+"; charset=utf-8", text)
}

// export answers a document read by read: in ?format, after the path's
// ids and the format are read.
func export(c echo.Context, read func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error)) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	format, err := exportFormat(c)
	if err != nil {
		return err
	}
	doc, err := read(c.Request().Context(), actor(c), ids)
	if err != nil {
		return err
	}
	return writeDocument(c, format, doc)
}

func (h *Handler) exportEnv(c echo.Context) error {
	return export(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return h.store.FlagsAsCode().ExportEnv(ctx, a, ids.Env)
	})
}

func (h *Handler) exportProject(c echo.Context) error {
	return export(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return h.store.FlagsAsCode().ExportProject(ctx, a, ids.Project)
	})
}

// importEnv applies a document, sent as the body in YAML (application/yaml,
// also application/x-yaml and text/yaml) or JSON, to an environment; with
// ?dryRun=true it says what would change and changes nothing. ?comment
// is the history entries' comment; where changes need approval, ?reason
// and ?reviewers (member ids) make the change requests. Any other
// parameter is refused: ignoring a misspelt ?dry_run would apply what the
// caller meant to try.
func (h *Handler) importEnv(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	var v core.Validator
	for name := range c.QueryParams() {
		if !slices.ContainsFunc(importParams, func(p string) bool { return strings.EqualFold(p, name) }) {
			v.At("parameter", "unknown", name, "an import reads dryRun, comment, reason and reviewers")
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	dryRun, err := queryBool(c, "dryRun")
	if err != nil {
		return err
	}
	in := flagsascode.ImportInput{DryRun: dryRun, Comment: query(c, "comment"), Reason: query(c, "reason"), Reviewers: []uuid.UUID{}}
	for _, r := range queryList(c, "reviewers") {
		id, err := uuid.Parse(r)
		if err != nil {
			return core.Invalid("reviewers_is_invalid")
		}
		in.Reviewers = append(in.Reviewers, id)
	}
	format, limit := flagsascode.FormatJSON, int64(MaxImportBytes)
	switch media, _, _ := mime.ParseMediaType(c.Request().Header.Get(echo.HeaderContentType)); media {
	case mimeYAML, "application/x-yaml", "text/yaml", "text/x-yaml":
		format, limit = flagsascode.FormatYAML, MaxYAMLImportBytes
	}
	body, err := httpx.ReadBody(c, limit)
	if err != nil {
		return err
	}
	if len(body) == 0 {
		return core.Invalid("body_is_required")
	}
	if format == flagsascode.FormatYAML {
		if _, err := httpx.Reserve(c, flagsascode.YAMLFactor*int64(len(body))); err != nil {
			return err
		}
	}
	if in.Document, err = flagsascode.DecodeDocument(body, format); err != nil {
		return err
	}
	plan, err := h.store.FlagsAsCode().Import(c.Request().Context(), actor(c), ids.Env, in)
	return respond(c, plan, err)
}
