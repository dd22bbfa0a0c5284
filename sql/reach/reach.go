// Package reach is the rule for which network addresses Bunting may call
// on its users' behalf (identity providers, webhooks): never link-local,
// metadata or unspecified ones, and loopback and private ones only where
// allowed. It is pure: the outbound client applies it when it dials (after
// DNS), and the store when it tells a webhook's author that no delivery can
// reach the URL they saved.
package reach

import (
	"errors"
	"net/netip"
)

// ErrAddress is a destination Bunting refuses to reach.
var ErrAddress = errors.New("address not allowed")

// AddressError names the refused address and why ("private network
// address").
type AddressError struct {
	Addr   netip.Addr
	Reason string
}

func (e *AddressError) Error() string { return e.Reason + " " + e.Addr.String() + " not allowed" }

// Is makes every AddressError an ErrAddress.
func (e *AddressError) Is(target error) bool { return target == ErrAddress }

// Reason names the kind of address Check refused ("private network
// address"), or says the error is not one of Check's.
func Reason(err error) string {
	var a *AddressError
	if errors.As(err, &a) {
		return a.Reason
	}
	return "refused address"
}

// Check refuses an address Bunting must not reach.
func Check(addr netip.Addr, allowPrivate bool) error {
	addr = addr.Unmap()
	if addr.Is6() && nat64.Contains(addr) { // 64:ff9b::a.b.c.d reaches a.b.c.d
		b := addr.As16()
		addr = netip.AddrFrom4([4]byte(b[12:]))
	}
	switch {
	case !addr.IsValid() || addr.IsUnspecified() || thisNetwork.Contains(addr) || addr == broadcast:
		return &AddressError{addr, "unspecified address"}
	case addr.IsLinkLocalUnicast() || addr.IsLinkLocalMulticast() || addr.IsInterfaceLocalMulticast():
		return &AddressError{addr, "link-local address"}
	case addr == aliyunMetadata || addr == awsMetadata6:
		return &AddressError{addr, "cloud metadata address"}
	case addr.IsMulticast():
		return &AddressError{addr, "multicast address"}
	case !allowPrivate && IsPrivate(addr):
		return &AddressError{addr, "private network address"}
	}
	return nil
}

// IsPrivate tells whether an address is on loopback or a private network
// (the addresses AllowPrivate opens): what answers there is the inside of
// the server's network, which callers must not show.
func IsPrivate(addr netip.Addr) bool {
	addr = addr.Unmap()
	return addr.IsLoopback() || addr.IsPrivate() || sharedSpace.Contains(addr)
}

var (
	thisNetwork    = netip.MustParsePrefix("0.0.0.0/8")
	sharedSpace    = netip.MustParsePrefix("100.64.0.0/10") // carrier-grade NAT
	nat64          = netip.MustParsePrefix("64:ff9b::/96")
	broadcast      = netip.MustParseAddr("255.255.255.255")
	aliyunMetadata = netip.MustParseAddr("100.100.100.200")
	awsMetadata6   = netip.MustParseAddr("fd00:ec2::254")
)
