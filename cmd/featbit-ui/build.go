package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// pinnedCommit is the FeatBit commit whose front-end the walk was written
// against: its services' requests and its pages' buttons are what the walk
// expects. Another commit is refused unless -commit names it, so a walk that
// fails says something about Bunting, not about a newer FeatBit.
const pinnedCommit = "366b4a1165941cc0551b91e79f27a0ec138b9a9f"

// frontEnd is FeatBit's front-end in the source tree.
const frontEnd = "modules/front-end"

// cacheDir is where builds are kept, outside the repository: one directory
// per commit, holding the extracted source (with node_modules) and its build.
func cacheDir(commit string) (string, error) {
	base := os.Getenv("XDG_CACHE_HOME")
	if !filepath.IsAbs(base) {
		home, err := os.UserHomeDir()
		if err != nil {
			return filepath.Join(os.TempDir(), "featbit-ui-"+commit), nil
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "featbit-ui", commit), nil
}

// builtUI returns the directory of the English build of FeatBit's UI at
// commit, building it first when the cache has none. src is a git directory
// (bare or not) holding the commit.
func builtUI(ctx context.Context, src, commit string, log io.Writer) (string, error) {
	dir, err := cacheDir(commit)
	if err != nil {
		return "", err
	}
	// One locale built alone lands in browser/ itself, with base href "/".
	out := filepath.Join(dir, "src", "dist", "featbit", "browser")
	if _, err := os.Stat(filepath.Join(out, "index.html")); err == nil {
		return out, nil
	}
	code := filepath.Join(dir, "src")
	if _, err := os.Stat(filepath.Join(code, "package-lock.json")); err != nil {
		if err := extract(ctx, src, commit, dir, log); err != nil {
			return "", err
		}
	}
	if _, err := os.Stat(filepath.Join(code, "node_modules", ".package-lock.json")); err != nil {
		// The postinstall script builds the dark-theme CSS the build needs.
		fmt.Fprintln(log, "featbit-ui: npm ci in", code)
		if err := runIn(ctx, code, log, "npm", "ci", "--no-audit", "--no-fund"); err != nil {
			return "", err
		}
	}
	fmt.Fprintln(log, "featbit-ui: ng build (production, English) in", code)
	// Only the English locale: the Chinese one needs fonts a shallow copy of
	// FeatBit's history may lack, and the walk reads English labels.
	ng := filepath.Join("node_modules", ".bin", "ng")
	if err := runIn(ctx, code, log, ng, "build", "--configuration", "production", "--localize=en"); err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(out, "index.html")); err != nil {
		return "", fmt.Errorf("ng build finished but %s has no index.html", out)
	}
	return out, nil
}

// extract writes modules/front-end at commit into dir/src, through a
// temporary directory so a stopped extraction is never taken for a whole one.
// It reads blob by blob rather than with git archive: a shallow or partial
// copy of FeatBit lacks a few blobs (fonts of the Chinese locale), which stop
// git archive but which the English build does not need.
func extract(ctx context.Context, src, commit, dir string, log io.Writer) error {
	tmp := filepath.Join(dir, "src.tmp")
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	var tree bytes.Buffer
	ls := exec.CommandContext(ctx, "git", "-C", src, "ls-tree", "-r", "-z", commit, frontEnd+"/")
	ls.Stdout, ls.Stderr = &tree, log
	if err := ls.Run(); err != nil {
		return fmt.Errorf("git ls-tree %s in %s: %w", commit, src, err)
	}
	type entry struct{ mode, hash, path string }
	var entries []entry
	for _, rec := range strings.Split(tree.String(), "\x00") {
		meta, path, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 || f[1] != "blob" {
			continue
		}
		entries = append(entries, entry{f[0], f[2], strings.TrimPrefix(path, frontEnd+"/")})
	}
	if len(entries) == 0 {
		return fmt.Errorf("%s has no %s at %s", src, frontEnd, commit)
	}
	// One cat-file process answers every blob in turn.
	cat := exec.CommandContext(ctx, "git", "-C", src, "cat-file", "--batch")
	in, err := cat.StdinPipe()
	if err != nil {
		return err
	}
	pipe, err := cat.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cat.Start(); err != nil {
		return err
	}
	r := bufio.NewReader(pipe)
	var missing []string
	for _, e := range entries {
		fmt.Fprintln(in, e.hash)
		head, err := r.ReadString('\n')
		if err != nil {
			return fmt.Errorf("git cat-file: %w", err)
		}
		if strings.HasSuffix(head, " missing\n") {
			missing = append(missing, e.path)
			continue
		}
		var hash, typ string
		var size int64
		if _, err := fmt.Sscanf(head, "%s %s %d", &hash, &typ, &size); err != nil {
			return fmt.Errorf("git cat-file: %q: %w", head, err)
		}
		name := filepath.Join(tmp, filepath.FromSlash(e.path))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return err
		}
		perm := os.FileMode(0o644)
		if e.mode == "100755" {
			perm = 0o755
		}
		f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
		if err != nil {
			return err
		}
		_, err = io.CopyN(f, r, size)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		if _, err := r.Discard(1); err != nil { // the newline after each blob
			return err
		}
	}
	in.Close()
	if err := cat.Wait(); err != nil {
		return err
	}
	for _, m := range missing {
		if !strings.Contains(m, "Noto-Sans-S-Chinese") {
			return fmt.Errorf("the FeatBit copy lacks %s, which the English build needs", m)
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(log, "featbit-ui: %d blobs absent from the copy (Chinese fonts), left out\n", len(missing))
	}
	code := filepath.Join(dir, "src")
	if err := os.RemoveAll(code); err != nil {
		return err
	}
	return os.Rename(tmp, code)
}

// run runs a command in dir, its output to log.
func runIn(ctx context.Context, dir string, log io.Writer, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}

// checkCommit resolves the source's HEAD (or the commit asked for) and
// refuses a commit other than the pinned one unless allowed.
func checkCommit(ctx context.Context, src, want string, allowOther bool) (string, error) {
	rev := want
	if rev == "" {
		rev = pinnedCommit
	}
	out, err := exec.CommandContext(ctx, "git", "-C", src, "rev-parse", "--verify", rev+"^{commit}").Output()
	if err != nil {
		return "", fmt.Errorf("%s does not hold FeatBit commit %s (FEATBIT_SRC is a FeatBit git checkout or mirror)", src, rev)
	}
	commit := strings.TrimSpace(string(out))
	if commit != pinnedCommit && !allowOther {
		return "", errors.New("the walk is pinned to FeatBit " + pinnedCommit + "; pass -allow-other-commit to build " + commit)
	}
	return commit, nil
}
