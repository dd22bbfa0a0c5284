// Package store is the one domain layer both surfaces stand on: input types
// and their validation, permission checks, transactions, audit entries, and
// the translation of database errors into domain errors. api/ and web/ only
// decode, call the store and encode.
//
// The domain lives in packages along its seams, each over the core: core
// (the actor, transactions, audit, errors, projects and environments), iam
// (identity and access), accesstokens (API credentials), sso (single sign-on
// attempts), flagstore (flags, approvals and change requests, and what flags
// ask of segments), segments, governance (reviews, schedules, triggers),
// flagcopy (comparing and copying between environments), webhooks,
// flagsascode (export and import), sdkdata (SDK data and end users),
// experiments, relayproxies, and workplace (where a person works in the
// pages, and what frames them). Store holds one of each and hands a surface
// one seam at a time through an accessor (s.Flags(), s.IAM(), ...).
// The core's primitives (its transactions, statements, pool, audit writer
// and keys) are no accessor's: a surface cannot reach them, so it cannot
// step around the store's rules.
package store

import (
	"context"
	"log/slog"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bunting-flags/bunting/sql/feed"
	"github.com/bunting-flags/bunting/sql/store/accesstokens"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/experiments"
	"github.com/bunting-flags/bunting/sql/store/flagcopy"
	"github.com/bunting-flags/bunting/sql/store/flagsascode"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/governance"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/relayproxies"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
	"github.com/bunting-flags/bunting/sql/store/segments"
	"github.com/bunting-flags/bunting/sql/store/sso"
	"github.com/bunting-flags/bunting/sql/store/webhooks"
	"github.com/bunting-flags/bunting/sql/store/workplace"
)

// Store is the domain layer over one PostgreSQL database: every seam over
// one core, each reached through its accessor.
type Store struct {
	core  *core.Core
	iam   *iam.IAM
	flags *flagstore.Flags
	segs  *segments.Segments
	sdk   *sdkdata.SDK
	hooks *webhooks.Webhooks
	code  *flagsascode.FlagsAsCode
	gov   *governance.Governance
	copy  *flagcopy.FlagCopy
	toks  *accesstokens.Tokens
	sso   *sso.SSO
	expts *experiments.Experiments
	relay *relayproxies.RelayProxies
	work  *workplace.Workplaces
}

// New returns a Store over pool using keys derived from the server secret.
func New(pool *pgxpool.Pool, keys core.Keys, log *slog.Logger, opts core.Options) *Store {
	c := core.New(pool, keys, log, opts)
	f := flagstore.New(c)
	sg := segments.New(c, f)
	w := webhooks.New(c, f)
	// Every flag and segment change is audited in the core, and its
	// webhook deliveries queued there, in the same transaction: the core
	// is below the webhooks, so it is handed them.
	c.SetWebhooks(webhooks.ChangeWebhookEvents, w.QueueWebhooks)
	i := iam.New(c)
	return &Store{core: c, iam: i, toks: accesstokens.New(c, i), sso: sso.New(c), flags: f, segs: sg, sdk: sdkdata.New(c, f, sg), hooks: w,
		code: flagsascode.New(c, f, sg), gov: governance.New(c, f),
		copy:  flagcopy.New(c, f),
		expts: experiments.New(c),
		relay: relayproxies.New(c),
		work:  workplace.New(c)}
}

// Projects is the core's own operations a surface calls: projects,
// environments and their secrets, the resources and name checks, the
// change feed, and the server's health, keys and settings. It names no
// primitive: no transaction, statement, pool or audit writer.
type Projects interface {
	AccessVersion() (version int64, watched bool)
	AllowPrivateNetworks() bool
	AuthorizeEnvironmentCreation(ctx context.Context, a *core.Actor, projectID uuid.UUID) error
	AuthorizeEnvironmentDeletion(ctx context.Context, a *core.Actor, projectID, envID uuid.UUID) error
	AuthorizeEnvironmentUpdate(ctx context.Context, a *core.Actor, projectID, envID uuid.UUID) error
	AuthorizeProjectCreation(a *core.Actor) error
	AuthorizeProjectDeletion(ctx context.Context, a *core.Actor, projectID uuid.UUID) error
	AuthorizeProjectRename(ctx context.Context, a *core.Actor, projectID uuid.UUID) error
	AuthorizeSecretCreation(ctx context.Context, a *core.Actor, envID uuid.UUID) error
	AuthorizeSecretDeletion(ctx context.Context, a *core.Actor, envID uuid.UUID) error
	AuthorizeSecretRename(ctx context.Context, a *core.Actor, envID uuid.UUID) error
	Changes() *feed.Notifier
	CreateEnvironment(ctx context.Context, a *core.Actor, projectID uuid.UUID, in core.EnvironmentInput) (core.Environment, error)
	CreateProject(ctx context.Context, a *core.Actor, in core.ProjectInput) (core.Project, error)
	CreateSecret(ctx context.Context, a *core.Actor, envID uuid.UUID, in core.SecretInput) (core.Secret, error)
	DeleteEnvironment(ctx context.Context, a *core.Actor, projectID, envID uuid.UUID) error
	DeleteProject(ctx context.Context, a *core.Actor, id uuid.UUID) error
	DeleteSecret(ctx context.Context, a *core.Actor, envID, secretID uuid.UUID) error
	Feed() feed.Config
	GetEnvironment(ctx context.Context, a *core.Actor, projectID, envID uuid.UUID) (core.Environment, error)
	GetProject(ctx context.Context, a *core.Actor, id uuid.UUID) (core.Project, error)
	IsAccessTokenNameUsed(ctx context.Context, a *core.Actor, name string) (bool, error)
	IsEnvironmentKeyUsed(ctx context.Context, a *core.Actor, projectID uuid.UUID, key string) (bool, error)
	IsGroupNameUsed(ctx context.Context, a *core.Actor, name string) (bool, error)
	IsOrganizationKeyUsed(ctx context.Context, a *core.Actor, key string) (bool, error)
	IsProjectKeyUsed(ctx context.Context, a *core.Actor, key string) (bool, error)
	IsWorkspaceKeyUsed(ctx context.Context, a *core.Actor, key string) (bool, error)
	Keys() core.Keys
	ListProjects(ctx context.Context, a *core.Actor) ([]core.Project, error)
	ListResources(ctx context.Context, a *core.Actor, f core.ResourceFilter) ([]core.Resource, error)
	ListResourcesV2(ctx context.Context, a *core.Actor, f core.ResourceFilterV2) ([]core.ResourceV2, error)
	Ping(ctx context.Context) error
	RenameProject(ctx context.Context, a *core.Actor, id uuid.UUID, in core.ProjectInput) (core.ProjectName, error)
	TouchAccessToken(ctx context.Context, id uuid.UUID) error
	UpdateEnvironment(ctx context.Context, a *core.Actor, projectID, envID uuid.UUID, in core.EnvironmentInput) (core.Environment, error)
	UpdateSecret(ctx context.Context, a *core.Actor, envID, secretID uuid.UUID, in core.SecretInput) (core.Secret, error)
}

var _ Projects = (*core.Core)(nil)

// Projects is the core's own operations.
func (s *Store) Projects() Projects { return s.core }

// IAM is identity and access: accounts, sessions, organizations,
// workspaces, members, groups and policies.
func (s *Store) IAM() *iam.IAM { return s.iam }

// Tokens is the organization's access tokens.
func (s *Store) Tokens() *accesstokens.Tokens { return s.toks }

// SSO is single sign-on: its offer and each attempt.
func (s *Store) SSO() *sso.SSO { return s.sso }

// Flags is flags and their governance.
func (s *Store) Flags() *flagstore.Flags { return s.flags }

// Segments is segments and what their changes do to the flags that use
// them.
func (s *Store) Segments() *segments.Segments { return s.segs }

// Webhooks is webhooks and their deliveries.
func (s *Store) Webhooks() *webhooks.Webhooks { return s.hooks }

// FlagsAsCode is flags and segments exported and imported as a document.
func (s *Store) FlagsAsCode() *flagsascode.FlagsAsCode { return s.code }

// Governance is triggers and the reviews inbox.
func (s *Store) Governance() *governance.Governance { return s.gov }

// Workplace is where a signed-in person works in the pages and what frames
// them.
func (s *Store) Workplace() *workplace.Workplaces { return s.work }

// FlagCopy is flags compared and copied between environments.
func (s *Store) FlagCopy() *flagcopy.FlagCopy { return s.copy }

// Experiments is experiment metrics, experiments, their SDK events and results.
func (s *Store) Experiments() *experiments.Experiments { return s.expts }

// RelayProxies is relay proxies, their agents and the agent protocol's reads.
func (s *Store) RelayProxies() *relayproxies.RelayProxies { return s.relay }

// SDK is the SDK data and end users.
func (s *Store) SDK() *sdkdata.SDK { return s.sdk }
