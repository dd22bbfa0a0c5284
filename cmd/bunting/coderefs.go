package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// bunting coderefs finds where a project's flag keys are used in a
// repository and sends the places to Bunting, which shows them on the
// flags' pages. Like export and import it calls a running Bunting's API
// with an access token: the keys come from the environment's flag list,
// and the upload replaces what the repository's branch said before.

const coderefsUsage = "usage: bunting coderefs --env ENV_ID [--dir DIR] [--repo NAME] [--branch BRANCH] [--commit SHA] [--dry-run]"

// Bounds of a scan: files larger than maxScanFileBytes are not read (they
// are generated or data, not code that names flags), nor files whose first
// bytes hold a NUL (binaries); snippetContext lines are kept around a use.
const (
	maxScanFileBytes = 1 << 20
	snippetContext   = 2
)

// keyQuotes delimit a flag key in code: a key is used where it is a string
// literal, so a short key ("beta") inside other words is not a use.
const keyQuotes = "\"'`"

// codeRefsCommand scans a directory for the environment's flag keys and
// uploads the places found.
func codeRefsCommand(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := newCommandFlags("coderefs", coderefsUsage)
	envID := fs.String("env", "", "id of the environment whose flag keys to look for")
	dir := fs.String("dir", ".", "the repository's directory")
	repo := fs.String("repo", "", "the repository's name (the directory's name when empty)")
	branch := fs.String("branch", "", "the branch (git's current branch when empty)")
	commit := fs.String("commit", "", "the commit scanned (git rev-parse HEAD when empty)")
	dryRun := fs.Bool("dry-run", false, "list what would be sent, and send nothing")
	if err := fs.parse(args, func() bool { return *envID != "" && fs.NArg() == 0 }); err != nil {
		return err
	}
	c, err := newAPIClient(getenv)
	if err != nil {
		return err
	}
	root, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	src, err := describeSource(ctx, root, *repo, *branch, *commit)
	if err != nil {
		return err
	}
	keys, err := flagKeys(ctx, c, *envID)
	if err != nil {
		return err
	}
	files, err := listFiles(ctx, root, src.git)
	if err != nil {
		return err
	}
	refs, dropped, err := scanFiles(root, files, keys)
	if err != nil {
		return err
	}
	in := flagstore.CodeRefsInput{Repository: src.repo, Branch: src.branch, Commit: src.commit, References: refs}
	if *dryRun {
		for _, r := range refs {
			fmt.Fprintf(stdout, "%s:%d %s\n", r.Path, r.Line, r.FlagKey)
		}
		fmt.Fprintf(stdout, "Dry run, nothing sent: %d references to %d flags in %d files of %s (%s at %.12s).\n",
			len(refs), countKeys(refs), len(files), src.repo, src.branch, src.commit)
		return nil
	}
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	answer, err := c.do(ctx, http.MethodPut, "/api/v1/envs/"+url.PathEscape(*envID)+"/code-references", nil, "application/json", body)
	if err != nil {
		return fmt.Errorf("coderefs: %w", err)
	}
	var out struct {
		Data flagstore.CodeRefsResult `json:"data"`
	}
	if err := json.Unmarshal(answer, &out); err != nil {
		return err
	}
	for _, d := range dropped {
		fmt.Fprintln(stdout, d)
	}
	fmt.Fprintf(stdout, "Sent %d references to %d flags from %d files of %s (%s at %.12s).\n",
		out.Data.References, out.Data.Flags, len(files), out.Data.Repository, out.Data.Branch, out.Data.Commit)
	return nil
}

// source is what names the code scanned: its repository, branch and commit.
type source struct {
	repo, branch, commit string
	// git is whether the directory is a git checkout.
	git bool
}

// describeSource reads the repository's name, branch and commit from git
// where the flags leave them out; outside git, the directory's name, and
// --branch and --commit or "none".
func describeSource(ctx context.Context, root, repo, branch, commit string) (source, error) {
	s := source{repo: repo, branch: branch, commit: commit}
	top, err := gitOutput(ctx, root, "rev-parse", "--show-toplevel")
	s.git = err == nil
	if s.repo == "" {
		s.repo = filepath.Base(root)
		if s.git {
			s.repo = filepath.Base(top)
		}
	}
	if s.git && s.branch == "" {
		s.branch, _ = gitOutput(ctx, root, "rev-parse", "--abbrev-ref", "HEAD")
	}
	if s.git && s.commit == "" {
		// A repository without a commit yet has no HEAD: its working tree is scanned.
		s.commit, _ = gitOutput(ctx, root, "rev-parse", "HEAD")
	}
	if s.branch == "" {
		s.branch = "none"
	}
	if s.commit == "" {
		s.commit = "none"
	}
	return s, nil
}

func gitOutput(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

// flagKeys lists the keys of every flag of the environment, archived ones
// too (a flag archived but still in code is what the pages warn of).
func flagKeys(ctx context.Context, c *apiClient, envID string) (map[string]bool, error) {
	keys := map[string]bool{}
	for _, archived := range []string{"false", "true"} {
		for page := 0; ; page++ {
			q := url.Values{"isArchived": {archived}, "pageIndex": {strconv.Itoa(page)}, "pageSize": {"100"}}
			body, err := c.do(ctx, http.MethodGet, "/api/v1/envs/"+url.PathEscape(envID)+"/feature-flags", q, "", nil)
			if err != nil {
				return nil, fmt.Errorf("listing the flags: %w", err)
			}
			var list struct {
				Data struct {
					Items []struct {
						Key string `json:"key"`
					} `json:"items"`
				} `json:"data"`
			}
			if err := json.Unmarshal(body, &list); err != nil {
				return nil, err
			}
			for _, f := range list.Data.Items {
				keys[f.Key] = true
			}
			if len(list.Data.Items) < 100 {
				break
			}
		}
	}
	return keys, nil
}

// listFiles lists the files to scan, relative to root with forward
// slashes: in a git checkout the ones git tracks or would (git ls-files
// --cached --others --exclude-standard, so .gitignore'd files are left
// out), elsewhere every file but those the root's .gitignore names.
func listFiles(ctx context.Context, root string, git bool) ([]string, error) {
	if git {
		cmd := exec.CommandContext(ctx, "git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("git ls-files: %w", err)
		}
		var files []string
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" {
				files = append(files, f)
			}
		}
		sort.Strings(files)
		return files, nil
	}
	ignore := readGitignore(filepath.Join(root, ".gitignore"))
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" || ignore.matches(rel, d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			files = append(files, rel)
		}
		return nil
	})
	return files, err
}

// gitignore is the simple part of a .gitignore: lines naming files or
// directories by a glob, anchored to the root by a leading or inner
// slash, a trailing slash for directories only. Negations (!) and "**"
// are not read; in a git checkout git itself decides.
type gitignore []ignoreRule

type ignoreRule struct {
	glob     string
	anchored bool
	dirOnly  bool
}

func readGitignore(file string) gitignore {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	var g gitignore
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "!") || strings.Contains(line, "**") {
			continue
		}
		r := ignoreRule{}
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimSuffix(line, "/")
		}
		if strings.Contains(line, "/") {
			r.anchored, line = true, strings.TrimPrefix(line, "/")
		}
		r.glob = line
		g = append(g, r)
	}
	return g
}

// matches tells whether a path (relative, forward slashes) is ignored.
func (g gitignore) matches(rel string, dir bool) bool {
	for _, r := range g {
		if r.dirOnly && !dir {
			continue
		}
		target := rel
		if !r.anchored {
			target = path.Base(rel)
		}
		if ok, _ := path.Match(r.glob, target); ok {
			return true
		}
	}
	return false
}

// scanFiles finds the keys in the files, in order of file and line. A
// flag named more than the server takes keeps its first places, and the
// scan stops at the server's bound on an upload; dropped says so.
func scanFiles(root string, files []string, keys map[string]bool) (refs []flagstore.CodeRef, dropped []string, err error) {
	perFlag := map[string]int{}
	over := map[string]bool{}
	for _, rel := range files {
		text, ok, err := readText(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			continue
		}
		lines := strings.Split(string(text), "\n")
		for i, line := range lines {
			for _, key := range keysIn(line, keys) {
				if perFlag[key] >= flagstore.MaxCodeRefsPerFlag {
					over[key] = true
					continue
				}
				if len(refs) >= flagstore.MaxCodeRefsPerUpload {
					dropped = append(dropped, fmt.Sprintf("Stopped at %d references, the most one upload takes; %s and the files after it are not all counted.", len(refs), rel))
					return refs, dropped, nil
				}
				perFlag[key]++
				refs = append(refs, flagstore.CodeRef{FlagKey: key, Path: rel, Line: i + 1, Snippet: snippet(lines, i)})
			}
		}
	}
	for key := range over {
		dropped = append(dropped, fmt.Sprintf("Flag %s is used in more than %d places: the first %d are sent.", key, flagstore.MaxCodeRefsPerFlag, flagstore.MaxCodeRefsPerFlag))
	}
	sort.Strings(dropped)
	return refs, dropped, nil
}

// readText reads a file to scan; ok is false for one too large, a
// binary, or one that is gone (a file git lists may have been deleted).
func readText(file string) (text []byte, ok bool, err error) {
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxScanFileBytes {
		return nil, false, err
	}
	text, err = io.ReadAll(io.LimitReader(f, maxScanFileBytes+1))
	if err != nil || len(text) > maxScanFileBytes {
		return nil, false, err
	}
	if bytes.IndexByte(text[:min(len(text), 8000)], 0) >= 0 {
		return nil, false, nil
	}
	return text, true, nil
}

// keysIn lists the flag keys a line holds as string literals, each once.
func keysIn(line string, keys map[string]bool) []string {
	var found []string
	for _, q := range keyQuotes {
		if !strings.ContainsRune(line, q) {
			continue
		}
		parts := strings.Split(line, string(q))
		for _, p := range parts[1 : len(parts)-1] {
			if keys[p] && !slices.Contains(found, p) {
				found = append(found, p)
			}
		}
	}
	return found
}

// snippet is the line at i with snippetContext lines either side, cut to
// what the server keeps.
func snippet(lines []string, i int) string {
	from, to := max(0, i-snippetContext), min(len(lines), i+snippetContext+1)
	s := strings.TrimRight(strings.Join(lines[from:to], "\n"), "\r\n")
	if r := []rune(s); len(r) > flagstore.MaxCodeRefSnippet {
		s = string(r[:flagstore.MaxCodeRefSnippet])
	}
	return strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), "\uFFFD")
}

func countKeys(refs []flagstore.CodeRef) int {
	seen := map[string]bool{}
	for _, r := range refs {
		seen[r.FlagKey] = true
	}
	return len(seen)
}
