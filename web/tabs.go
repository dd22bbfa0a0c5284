package web

// Main navigation entries of the flag, segment and history pages.
const (
	navFlags    = "flags"
	navSegments = "segments"
	navAuditLog = "audit-log"
)

// Tabs of a flag's and a segment's page.
const (
	tabTargeting  = "targeting"
	tabVariations = "variations"
	tabUsage      = "usage"
	tabSettings   = "settings"
	tabHistory    = "history"
)
