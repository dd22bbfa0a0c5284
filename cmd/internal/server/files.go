package server

import (
	"log/slog"
	"syscall"

	"golang.org/x/time/rate"

	"github.com/bunting-flags/bunting/web/sdk"
)

// RaiseFileLimit raises the soft limit on open files to the hard limit (Go
// does so itself since 1.19; doing it here too keeps it true and tells the
// log the number) and returns the limit in force, 0 when unknown. Every
// streaming connection holds a descriptor; the default soft limit of 1,024
// would run out long before the connection caps.
func RaiseFileLimit(log *slog.Logger) uint64 {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		log.Warn("reading the open-file limit", "err", err)
		return 0
	}
	if l.Cur < l.Max {
		was := l.Cur
		l.Cur = l.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
			log.Warn("raising the open-file limit", "err", err, "limit", was)
			return was
		}
	}
	log.Info("open-file limit", "soft", l.Cur, "hard", l.Max)
	return l.Cur
}

// SDKOptions are the SDK endpoints' limits from the configuration, with the
// total of streaming connections kept to three quarters of the open-file
// limit: the other quarter (at least 256 descriptors of the default 1,024)
// stays for the API, the pages, the database pool and files, so they answer
// while the streaming cap is reached.
func SDKOptions(cfg Config, files uint64, log *slog.Logger) sdk.Options {
	conns := sdk.Connections{Total: cfg.SDKConnections, PerSecret: cfg.SDKConnectionsPerSecret, PerAddress: cfg.SDKConnectionsPerAddr,
		PerOrg: cfg.SDKConnectionsPerOrg, PerEnv: cfg.SDKConnectionsPerEnv, ClientShare: cfg.SDKClientShare}
	if files > 0 {
		if most := files / 4 * 3; uint64(conns.Total) > most {
			log.Warn("streaming connections capped below the open-file limit", "configured", conns.Total, "cap", most)
			conns.Total = int(most)
		}
	}
	limits := sdk.DefaultLimits
	limits.PerSecret, limits.SecretBurst = rate.Limit(cfg.SDKRatePerSecret), 2*cfg.SDKRatePerSecret
	limits.PerAddress, limits.AddressBurst = rate.Limit(cfg.SDKRatePerAddr), 2*cfg.SDKRatePerAddr
	limits.EndUsersPerSecret, limits.EvaluationsPerSecret = cfg.SDKEndUsersPerSecret, cfg.SDKEvaluationsPerSecret
	return sdk.Options{Limits: limits, Connections: conns, RelayAgentQuota: int64(cfg.RelayAgentQuota)}
}
