package flagstore

import (
	"context"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// Code references: where a project's flag keys are used in a repository,
// as `bunting coderefs` found them. They belong to the project (a key names
// the same flag in every environment) and are replaced per repository and
// branch on each upload.

// Code reference bounds: an upload is one bounded request, and a flag's
// page lists at most MaxCodeRefsPerFlag places per repository and branch.
const (
	MaxCodeRefsPerUpload = 5000
	MaxCodeRefsPerFlag   = 100
	MaxCodeRefSnippet    = 2000 // characters: a few lines around the use
	MaxCodeRefPath       = 1024
	MaxCodeRefRepository = 200
	MaxCodeRefCommit     = 64
	// CodeRefsBodyBytes bounds an upload's body: MaxCodeRefsPerUpload
	// references of a path and a snippet of typical size fit well within it.
	CodeRefsBodyBytes = 4 << 20
)

// ErrTooManyCodeRefs refuses an upload of more references than
// MaxCodeRefsPerUpload; ErrTooManyCodeRefsForFlag one naming a flag more
// than MaxCodeRefsPerFlag times. The command stops at both bounds first.
var (
	ErrTooManyCodeRefs        = &core.RuleError{Code: "TooManyCodeReferences"}
	ErrTooManyCodeRefsForFlag = &core.RuleError{Code: "TooManyCodeReferencesForFlag"}
)

// CodeRefsInput is an upload of the references found in one repository's
// branch at one commit. It replaces what that repository and branch said
// before; an empty list says the keys are no longer used there.
type CodeRefsInput struct {
	Repository string    `json:"repository"`
	Branch     string    `json:"branch"`
	Commit     string    `json:"commit"`
	References []CodeRef `json:"references"`
}

// CodeRef is one use of a flag key: the file, the line and a few lines
// around it.
type CodeRef struct {
	FlagKey string `json:"flagKey"`
	Path    string `json:"path"`
	Line    int    `json:"line"`
	Snippet string `json:"snippet"`
}

// CodeRefsResult says what an upload stored.
type CodeRefsResult struct {
	Repository string `json:"repository"`
	Branch     string `json:"branch"`
	Commit     string `json:"commit"`
	References int    `json:"references"`
	Flags      int    `json:"flags"`
}

// FlagCodeRef is a use of a flag's key, with where it was found.
type FlagCodeRef struct {
	Path       string    `json:"path"`
	Line       int       `json:"line"`
	Snippet    string    `json:"snippet"`
	Repository string    `json:"repository"`
	Branch     string    `json:"branch"`
	Commit     string    `json:"commit"`
	UploadedAt time.Time `json:"uploadedAt"`
}

// codeRefsAction is what uploading code references requires on every flag
// of the environment: they describe the flags, as their descriptions do.
const codeRefsAction = access.UpdateFlagDescription

// AuthorizeCodeRefs checks what uploading code references through an
// environment requires, before the upload is read: describing every flag
// of the environment.
func (s *Flags) AuthorizeCodeRefs(ctx context.Context, a *core.Actor, envID uuid.UUID) error {
	env, err := s.core.EnvironmentOf(ctx, a, envID)
	if err != nil {
		return err
	}
	return a.Require(codeRefsAction, env.RN()+":flag/*")
}

func (in *CodeRefsInput) check() error {
	var v core.Validator
	in.Repository, in.Branch, in.Commit = strings.TrimSpace(in.Repository), strings.TrimSpace(in.Branch), strings.TrimSpace(in.Commit)
	v.Required("repository", in.Repository, MaxCodeRefRepository)
	v.Required("branch", in.Branch, MaxCodeRefRepository)
	v.Required("commit", in.Commit, MaxCodeRefCommit)
	if in.References == nil {
		v.Add("references", "required")
	}
	for i, r := range in.References {
		at := "references/" + strconv.Itoa(i)
		switch {
		case r.FlagKey == "" || !core.KeyPattern.MatchString(r.FlagKey) || len(r.FlagKey) > core.MaxKeyLen:
			v.At("flagKey", "invalid", at+"/flagKey", "a flag key")
		case strings.TrimSpace(r.Path) == "" || !validText(r.Path, MaxCodeRefPath):
			v.At("path", "invalid", at+"/path", "a path inside the repository, at most 1024 characters")
		case r.Line < 1:
			v.At("line", "invalid", at+"/line", "a line number from 1")
		case !validText(r.Snippet, MaxCodeRefSnippet):
			v.At("snippet", "invalid", at+"/snippet", "at most 2000 characters of text")
		default:
			continue
		}
		break // the first wrong reference is named; the rest are likely alike
	}
	return v.Err()
}

func validText(s string, max int) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0) && utf8.RuneCountInString(s) <= max
}

// UploadCodeRefs replaces the references of a repository's branch in the
// environment's project with the ones given, in one transaction with its
// audit entry. It needs describing every flag of the environment.
func (s *Flags) UploadCodeRefs(ctx context.Context, a *core.Actor, envID uuid.UUID, in CodeRefsInput) (CodeRefsResult, error) {
	env, err := s.core.EnvironmentOf(ctx, a, envID)
	if err != nil {
		return CodeRefsResult{}, err
	}
	if err := a.Require(codeRefsAction, env.RN()+":flag/*"); err != nil {
		return CodeRefsResult{}, err
	}
	if len(in.References) > MaxCodeRefsPerUpload {
		return CodeRefsResult{}, ErrTooManyCodeRefs
	}
	if err := in.check(); err != nil {
		return CodeRefsResult{}, err
	}
	perFlag := map[string]int{}
	n := len(in.References)
	keys, paths, lines, snippets := make([]string, n), make([]string, n), make([]int32, n), make([]string, n)
	for i, r := range in.References {
		if perFlag[r.FlagKey]++; perFlag[r.FlagKey] > MaxCodeRefsPerFlag {
			return CodeRefsResult{}, ErrTooManyCodeRefsForFlag
		}
		keys[i], paths[i], lines[i], snippets[i] = r.FlagKey, r.Path, int32(r.Line), r.Snippet
	}
	projectID := env.Environment.ProjectID
	out := CodeRefsResult{Repository: in.Repository, Branch: in.Branch, Commit: in.Commit, References: n, Flags: len(perFlag)}
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		up, err := q.UpsertCodeReferenceUpload(ctx, db.UpsertCodeReferenceUploadParams{ProjectID: projectID,
			Repository: in.Repository, Branch: in.Branch, CommitSha: in.Commit})
		if err != nil {
			return err
		}
		before, err := q.DeleteCodeReferences(ctx, up.ID)
		if err != nil {
			return err
		}
		if _, err := q.InsertCodeReferences(ctx, db.InsertCodeReferencesParams{UploadID: up.ID, ProjectID: projectID,
			FlagKeys: keys, Paths: paths, Lines: lines, Snippets: snippets}); err != nil {
			return err
		}
		// The entry says what the upload replaced, not every line: the
		// references themselves are on the flags' pages.
		type summary struct {
			Repository string `json:"repository"`
			Branch     string `json:"branch"`
			Commit     string `json:"commit,omitempty"`
			References int64  `json:"references"`
			Flags      int    `json:"flags,omitempty"`
		}
		return s.core.Audit(ctx, q, a, core.Change{RefType: "CodeReferences", RefID: up.ID.String(),
			Keyword: in.Repository + "," + in.Branch, Operation: core.OpUpdate, EnvID: &envID,
			Previous: summary{Repository: in.Repository, Branch: in.Branch, References: before},
			Current:  summary{Repository: in.Repository, Branch: in.Branch, Commit: in.Commit, References: int64(n), Flags: len(perFlag)}})
	})
	return out, core.Translate(err)
}

// FlagCodeRefs lists where a flag's key is used in the code of its
// project's repositories, for a person who may read the flag.
func (s *Flags) FlagCodeRefs(ctx context.Context, a *core.Actor, envID uuid.UUID, key string) ([]FlagCodeRef, error) {
	if _, err := s.GetFlag(ctx, a, envID, key); err != nil {
		return nil, err
	}
	env, err := s.core.EnvironmentOf(ctx, a, envID)
	if err != nil {
		return nil, err
	}
	rows, err := s.core.Q.ListFlagCodeReferences(ctx, db.ListFlagCodeReferencesParams{ProjectID: env.Environment.ProjectID,
		FlagKey: key, Max: MaxCodeRefsPerFlag * 10})
	if err != nil {
		return nil, core.Translate(err)
	}
	out := make([]FlagCodeRef, len(rows))
	for i, r := range rows {
		out[i] = FlagCodeRef{Path: r.Path, Line: int(r.Line), Snippet: r.Snippet, Repository: r.Repository,
			Branch: r.Branch, Commit: r.CommitSha, UploadedAt: r.UploadedAt}
	}
	return out, nil
}

// CodeRefCounts counts the code references of each of the keys given in
// the environment's project (keys without any are absent), for a person
// who may read the environment: the flag list marks archived flags still
// used in code.
func (s *Flags) CodeRefCounts(ctx context.Context, a *core.Actor, envID uuid.UUID, keys []string) (map[string]int, error) {
	out := map[string]int{}
	if len(keys) == 0 {
		return out, nil
	}
	env, err := s.core.ReadableEnv(ctx, a, envID)
	if err != nil {
		return nil, err
	}
	rows, err := s.core.Q.CountCodeReferencesByKey(ctx, db.CountCodeReferencesByKeyParams{ProjectID: env.Environment.ProjectID, FlagKeys: keys})
	if err != nil {
		return nil, core.Translate(err)
	}
	for _, r := range rows {
		out[r.FlagKey] = int(r.Refs)
	}
	return out, nil
}
