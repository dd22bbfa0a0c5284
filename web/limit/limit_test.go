package limit

import (
	"testing"

	"golang.org/x/time/rate"
)

// TestLimiter: a request asked under several keys needs a token from each
// and pays every one even when another refuses; Exhausted only looks.
func TestLimiter(t *testing.T) {
	t.Parallel()
	l := New(rate.Every(1<<40), 2) // no refill within the test
	if !l.Allow("user:a", "addr:1") || !l.Allow("user:a", "addr:2") {
		t.Fatal("the first two requests of user a were refused, want allowed (burst 2)")
	}
	if l.Allow("user:a", "addr:3") {
		t.Fatal("a third request of user a from a fresh address was allowed, want refused")
	}
	// addr:3 paid for the refused request: one token left, not two.
	if !l.Allow("addr:3") || l.Allow("addr:3") {
		t.Fatal("addr:3 after a refused request: want exactly one token left")
	}
	looked, lookedAgain := l.Exhausted("addr:1"), l.Exhausted("addr:1") // the first look must take nothing
	if looked || lookedAgain {
		t.Fatal("addr:1 with one token left reads as exhausted, want not (and looking takes none)")
	}
	if !l.Exhausted("user:a") {
		t.Fatal("user a with no token left reads as not exhausted")
	}
}

// TestAllowUpTo: a batch takes what the bucket holds, never more, and
// nothing once it is empty; other keys keep their own.
func TestAllowUpTo(t *testing.T) {
	t.Parallel()
	l := New(rate.Every(1<<40), 5) // no refill within the test
	if got := l.AllowUpTo("secret:a", 3); got != 3 {
		t.Fatalf("3 of a full bucket of 5: granted %d", got)
	}
	if got := l.AllowUpTo("secret:a", 50); got != 2 {
		t.Fatalf("50 with 2 left: granted %d, want 2", got)
	}
	if got := l.AllowUpTo("secret:a", 1); got != 0 {
		t.Fatalf("1 from an empty bucket: granted %d, want 0", got)
	}
	if got := l.AllowUpTo("secret:b", 50); got != 5 {
		t.Fatalf("another key's burst: granted %d, want 5", got)
	}
	if got := l.AllowUpTo("secret:c", 0); got != 0 || l.Exhausted("secret:c") {
		t.Fatalf("asking for nothing took %d or emptied the bucket", got)
	}
}
