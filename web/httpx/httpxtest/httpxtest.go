// Package httpxtest is what the tests that drive the handlers share: a
// request body that counts what the server reads of it, the rise of the
// heap while requests are served, and a log sink the handlers may write to
// at once.
package httpxtest

import (
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// CountedBody is a request body that counts the bytes the server reads of it.
type CountedBody struct {
	r    io.Reader
	read atomic.Int64
}

// NewCountedBody counts what is read of r.
func NewCountedBody(r io.Reader) *CountedBody { return &CountedBody{r: r} }

func (b *CountedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read.Add(int64(n))
	return n, err
}

// Count is how many bytes have been read.
func (b *CountedBody) Count() int64 { return b.read.Load() }

// HeapRise runs f and returns how far the heap in use rose meanwhile above
// where it was before, sampled every millisecond.
func HeapRise(f func()) uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	base := m.HeapInuse
	var peak atomic.Uint64
	done, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	f()
	close(done)
	<-sampled
	return max(peak.Load(), base) - base
}

// LogBuffer is a log sink safe for concurrent handlers.
type LogBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
