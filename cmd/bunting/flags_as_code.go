package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bunting-flags/bunting/api"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagsascode"
)

// bunting export and bunting import talk to a running Bunting through its
// API with an access token, so an import meets the same rights, approvals,
// history and SDK notifications as every other change: the command only
// moves the file and says what the server answered.

// commandFlags are the flags of a command that calls a running Bunting's
// API (export, import, coderefs): usage is what a mistake in them is
// answered with, and nothing is printed while parsing.
type commandFlags struct {
	*flag.FlagSet
	usage string
}

func newCommandFlags(name, usage string) commandFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return commandFlags{fs, usage}
}

// parse reads args; valid, asked after, says whether the values (and the
// arguments left) make a command.
func (fs commandFlags) parse(args []string, valid func() bool) error {
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%v\n%s", err, fs.usage)
	}
	if !valid() {
		return errors.New(fs.usage)
	}
	return nil
}

// apiClient calls a Bunting's API with an access token.
type apiClient struct {
	base  string
	token string
	http  *http.Client
}

// newAPIClient reads BUNTING_URL (http://localhost:8080 when unset) and
// BUNTING_TOKEN, every problem at once.
func newAPIClient(getenv func(string) string) (*apiClient, error) {
	var problems []string
	base := strings.TrimRight(getenv("BUNTING_URL"), "/")
	if base == "" {
		base = "http://localhost:8080"
	}
	if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		problems = append(problems, "BUNTING_URL: want an http or https URL, got "+base)
	}
	token := strings.TrimSpace(getenv("BUNTING_TOKEN"))
	if token == "" {
		problems = append(problems, "BUNTING_TOKEN: set it to an access token (bunting token create, or the Access tokens page)")
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "\n"))
	}
	return &apiClient{base: base, token: token, http: &http.Client{Timeout: 2 * time.Minute}}, nil
}

// envelope is the API's answer around data, or its failure.
type envelope struct {
	Success bool            `json:"success"`
	Errors  []string        `json:"errors"`
	Data    json.RawMessage `json:"data"`
	Details []struct {
		Path    string `json:"path"`
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"details"`
}

// maxAnswerBytes bounds an answer the commands read: an export of a
// project of many environments.
const maxAnswerBytes = 64 << 20

// refusal is an answer of the server's other than success: what it
// refused, or the failure it reported.
type refusal struct {
	status int
	text   string
}

func (r *refusal) Error() string { return r.text }

// do sends a request and returns the answer's body when it succeeded, or
// an error saying what the server refused and where in the file (a
// *refusal), or that no whole answer came.
func (c *apiClient) do(ctx context.Context, method, path string, query url.Values, contentType string, body []byte) ([]byte, error) {
	target := c.base + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", c.token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return nil, err
	}
	if len(out) > maxAnswerBytes {
		return nil, fmt.Errorf("%s %s: the answer is over %d MiB", method, path, maxAnswerBytes>>20)
	}
	if resp.StatusCode == http.StatusOK {
		return out, nil
	}
	var env envelope
	if json.Unmarshal(out, &env) != nil || len(env.Errors) == 0 {
		return nil, &refusal{resp.StatusCode, fmt.Sprintf("%s %s: %s", method, path, resp.Status)}
	}
	lines := []string{fmt.Sprintf("%s: %s", resp.Status, strings.Join(env.Errors, ", "))}
	for _, d := range env.Details {
		line := "  " + d.Path + ": " + d.Code
		if d.Message != "" {
			line += " (" + d.Message + ")"
		}
		lines = append(lines, line)
	}
	return nil, &refusal{resp.StatusCode, strings.Join(lines, "\n")}
}

const exportUsage = "usage: bunting export (--env ENV_ID | --project PROJECT_ID) [--format yaml|json] [--out FILE]"

// exportCommand writes an environment's (or a project's) flags and
// segments as YAML (the default) or JSON, to stdout or --out.
func exportCommand(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := newCommandFlags("export", exportUsage)
	envID := fs.String("env", "", "id of the environment to export")
	projectID := fs.String("project", "", "id of the project whose every environment to export")
	format := fs.String("format", "yaml", "yaml or json")
	out := fs.String("out", "", "file to write (stdout when empty)")
	if err := fs.parse(args, func() bool {
		return (*envID == "") != (*projectID == "") && fs.NArg() == 0 && (*format == "yaml" || *format == "json")
	}); err != nil {
		return err
	}
	c, err := newAPIClient(getenv)
	if err != nil {
		return err
	}
	path := "/api/v1/envs/" + url.PathEscape(*envID) + "/export"
	if *projectID != "" {
		path = "/api/v1/projects/" + url.PathEscape(*projectID) + "/export"
	}
	body, err := c.do(ctx, http.MethodGet, path, url.Values{"format": {*format}}, "", nil)
	if err != nil {
		return err
	}
	if *format == "json" {
		// The API answers JSON in its envelope; the file is the document.
		var env envelope
		if err := json.Unmarshal(body, &env); err != nil {
			return err
		}
		var buf bytes.Buffer
		if err := json.Indent(&buf, env.Data, "", "  "); err != nil {
			return err
		}
		body = append(buf.Bytes(), '\n')
	}
	if *out == "" {
		_, err = stdout.Write(body)
		return err
	}
	return os.WriteFile(*out, body, 0o644)
}

const importUsage = "usage: bunting import --env ENV_ID [--dry-run] [--comment TEXT] [--reason TEXT] [--reviewers ID,ID] FILE"

// importPlan is the API's answer to an import.
type importPlan struct {
	Changes []struct {
		Kind   string   `json:"kind"`
		Key    string   `json:"key"`
		Action string   `json:"action"`
		Words  []string `json:"words"`
	} `json:"changes"`
	Applied         bool `json:"applied"`
	PendingApproval []struct {
		Key             string   `json:"key"`
		ChangeRequestID string   `json:"changeRequestId"`
		Words           []string `json:"words"`
	} `json:"pendingApproval"`
}

// importCommand applies a file (YAML, or JSON by its .json name) to an
// environment and says, flag by flag, what changed or, with --dry-run,
// what would.
func importCommand(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := newCommandFlags("import", importUsage)
	envID := fs.String("env", "", "id of the environment to import into")
	dryRun := fs.Bool("dry-run", false, "say what would change, and change nothing")
	comment := fs.String("comment", "", "the history entries' comment")
	reason := fs.String("reason", "", "the change requests' reason, where changes need approval")
	reviewers := fs.String("reviewers", "", "member ids, comma-separated, who review the change requests")
	if err := fs.parse(args, func() bool { return *envID != "" && fs.NArg() == 1 }); err != nil {
		return err
	}
	file := fs.Arg(0)
	text, err := readImport(file)
	if err != nil {
		return err
	}
	c, err := newAPIClient(getenv)
	if err != nil {
		return err
	}
	q := url.Values{}
	if *dryRun {
		q.Set("dryRun", "true")
	}
	for name, v := range map[string]string{"comment": *comment, "reason": *reason, "reviewers": *reviewers} {
		if v != "" {
			q.Set(name, v)
		}
	}
	body, err := c.do(ctx, http.MethodPost, "/api/v1/envs/"+url.PathEscape(*envID)+"/import", q, "application/json", text)
	var refused *refusal
	switch {
	case errors.As(err, &refused) && refused.status < http.StatusInternalServerError:
		return fmt.Errorf("import refused, nothing changed: %w", err)
	case err != nil:
		// The import is one transaction, but an answer that did not come
		// (or a proxy's 5xx) may have followed its commit.
		return fmt.Errorf("import: %w\nwhether it changed anything is not known: export the environment, or import again with --dry-run", err)
	}
	var answer struct {
		Data importPlan `json:"data"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		return err
	}
	writePlan(stdout, answer.Data)
	return nil
}

// readImport reads a file to import as the JSON document the server
// takes, refusing one larger than the server takes before sending it. A
// YAML file is read here: the server takes YAML only up to
// api.MaxYAMLImportBytes, as decoding it costs many times its size, and a
// file that cannot be read is named with its line.
func readImport(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	text, err := io.ReadAll(io.LimitReader(f, api.MaxImportBytes+1))
	if err != nil {
		return nil, err
	}
	if len(text) > api.MaxImportBytes {
		return nil, fmt.Errorf("%s: an import takes at most %d MiB", file, api.MaxImportBytes>>20)
	}
	if strings.EqualFold(filepath.Ext(file), ".json") {
		return text, nil
	}
	doc, err := flagsascode.DecodeDocument(text, flagsascode.FormatYAML)
	var verr *core.ValidationError
	if errors.As(err, &verr) && len(verr.Details) > 0 {
		return nil, fmt.Errorf("%s: %s", file, verr.Details[0].Message)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if text, err = json.Marshal(doc); err != nil {
		return nil, err
	}
	if len(text) > api.MaxImportBytes {
		return nil, fmt.Errorf("%s: an import takes at most %d MiB, and this file is larger as JSON", file, api.MaxImportBytes>>20)
	}
	return text, nil
}

// writePlan says what an import did, in the history page's words.
func writePlan(w io.Writer, p importPlan) {
	counts := map[string]int{}
	for _, ch := range p.Changes {
		counts[ch.Action]++
		if ch.Action == "unchanged" {
			continue
		}
		fmt.Fprintf(w, "%s %s: %s\n", ch.Kind, ch.Key, ch.Action)
		for _, words := range ch.Words {
			fmt.Fprintf(w, "  %s\n", words)
		}
	}
	for _, r := range p.PendingApproval {
		fmt.Fprintf(w, "flag %s: waits for approval (change request %s)\n", r.Key, r.ChangeRequestID)
		for _, words := range r.Words {
			fmt.Fprintf(w, "  %s\n", words)
		}
	}
	verb := "Applied"
	if !p.Applied {
		verb = "Dry run, nothing changed; would apply"
	}
	fmt.Fprintf(w, "%s: %d created, %d updated, %d pending approval, %d unchanged. Flags and segments not in the file are left as they are.\n",
		verb, counts["create"], counts["update"], counts["pendingApproval"], counts["unchanged"])
}
