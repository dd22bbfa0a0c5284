package web

import "testing"

// TestActionLabel: action names read as words, keeping acronyms whole.
func TestActionLabel(t *testing.T) {
	for _, tc := range []struct{ action, want string }{
		{"UpdateFlagName", "Update flag name"},
		{"UpdateWorkspaceSSOSettings", "Update workspace SSO settings"},
		{"CanManageIAM", "Can manage IAM"},
		{"UpdateOIDCSettings", "Update OIDC settings"},
		{"CreateApiKey", "Create API key"},
		{"ReadSdkKey", "Read SDK key"},
		{"SetWebhookUrl", "Set webhook URL"},
		{"GetUserId", "Get user ID"},
		{"URLCheck", "URL check"},
		{"CreateAccessToken", "Create access token"},
		{"Toggle", "Toggle"},
		{"", ""},
	} {
		if got := actionLabel(tc.action); got != tc.want {
			t.Errorf("actionLabel(%q) = %q, want %q", tc.action, got, tc.want)
		}
	}
}
