package reach

import (
	"errors"
	"net/netip"
	"testing"
)

// TestCheck: which addresses Bunting may call, with and without private
// networks allowed.
func TestCheck(t *testing.T) {
	for _, c := range []struct {
		addr          string
		open, private bool // allowed with AllowPrivate off, on
	}{
		{"93.184.216.34", true, true},
		{"2606:2800:220:1:248:1893:25c8:1946", true, true},
		{"127.0.0.1", false, true},
		{"::1", false, true},
		{"10.1.2.3", false, true},
		{"172.16.0.1", false, true},
		{"192.168.0.1", false, true},
		{"100.64.0.1", false, true},
		{"fd12::1", false, true},
		{"::ffff:127.0.0.1", false, true},
		{"169.254.169.254", false, false},
		{"::ffff:169.254.169.254", false, false},
		{"64:ff9b::a9fe:a9fe", false, false}, // NAT64 of 169.254.169.254
		{"fe80::1", false, false},
		{"100.100.100.200", false, false},
		{"fd00:ec2::254", false, false},
		{"0.0.0.0", false, false},
		{"0.1.2.3", false, false},
		{"::", false, false},
		{"255.255.255.255", false, false},
		{"224.0.0.1", false, false},
		{"ff02::1", false, false},
	} {
		a := netip.MustParseAddr(c.addr)
		if got := Check(a, false) == nil; got != c.open {
			t.Errorf("%s with private networks refused: allowed=%v, want %v", c.addr, got, c.open)
		}
		if got := Check(a, true) == nil; got != c.private {
			t.Errorf("%s with private networks allowed: allowed=%v, want %v", c.addr, got, c.private)
		}
		if err := Check(a, false); err != nil && !errors.Is(err, ErrAddress) {
			t.Errorf("%s: %v is not ErrAddress", c.addr, err)
		}
	}
}
