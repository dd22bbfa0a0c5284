package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	_ "net/http/pprof" // the floor address serves /debug/pprof, to profile a run
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"sync/atomic"

	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"
)

// The floor of the streaming scenarios, in the server process: a bare
// gorilla/websocket server (the library's default buffers, one goroutine
// per connection, no token, no limits, no queue) that answers a data-sync
// with Bunting's own full data-sync bytes and writes a change's bytes to
// every connection in one loop. A floor change is the floor's targeting
// write (the same SQL as flag-targeting's floor) followed by that
// broadcast, so it costs what any server must: the write, then the same
// bytes to each socket.
type streamFloor struct {
	upgrader websocket.Upgrader
	full     atomic.Pointer[websocket.PreparedMessage]

	mu    sync.Mutex
	conns map[*floorStream]struct{}
}

type floorStream struct {
	mu sync.Mutex // one writer at a time
	ws *websocket.Conn
}

// registerStreamFloor adds the streaming floor and the server's memory
// statistics (and pprof, to profile a run) to the floor's address.
func registerStreamFloor(e *echo.Echo) {
	f := &streamFloor{conns: map[*floorStream]struct{}{}}
	e.GET("/floor/streaming", f.serve)
	e.PUT("/floor/stream/payload", f.setPayload)
	e.PUT("/floor/stream/broadcast", f.broadcast)
	registerRuntimeHandlers(e)
	e.GET("/debug/pprof/*", echo.WrapHandler(http.DefaultServeMux))
	var profile bytes.Buffer
	e.POST("/_bench/cpu-profile/start", func(c echo.Context) error {
		profile.Reset()
		if err := pprof.StartCPUProfile(&profile); err != nil {
			return c.String(http.StatusConflict, err.Error())
		}
		return c.NoContent(http.StatusOK)
	})
	e.POST("/_bench/cpu-profile/stop", func(c echo.Context) error {
		pprof.StopCPUProfile()
		return c.Blob(http.StatusOK, "application/octet-stream", profile.Bytes())
	})
}

// startProfiles starts CPU profiles of the server and of this process; the
// function returned stops them and writes them to prefix-server.pprof and
// prefix-bench.pprof.
func (w *benchWorld) startProfiles(ctx context.Context, prefix string) (func() error, error) {
	if err := w.call(ctx, "POST", w.floorURL+"/_bench/cpu-profile/start", nil, false, nil); err != nil {
		return nil, err
	}
	var own bytes.Buffer
	if err := pprof.StartCPUProfile(&own); err != nil {
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := os.WriteFile(prefix+"-bench.pprof", own.Bytes(), 0o644); err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, "POST", w.floorURL+"/_bench/cpu-profile/stop", nil)
		if err != nil {
			return err
		}
		resp, err := w.http.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		return os.WriteFile(prefix+"-server.pprof", data, 0o644)
	}, nil
}

func (f *streamFloor) setPayload(c echo.Context) error {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return c.NoContent(http.StatusBadRequest)
	}
	pm, err := websocket.NewPreparedMessage(websocket.TextMessage, body)
	if err != nil {
		return c.NoContent(http.StatusBadRequest)
	}
	f.full.Store(pm)
	return c.NoContent(http.StatusOK)
}

func (f *streamFloor) serve(c echo.Context) error {
	ws, err := f.upgrader.Upgrade(c.Response(), c.Request(), nil)
	if err != nil {
		return nil
	}
	fs := &floorStream{ws: ws}
	f.mu.Lock()
	f.conns[fs] = struct{}{}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.conns, fs)
		f.mu.Unlock()
		ws.Close()
	}()
	for {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			return nil
		}
		if bytes.Contains(msg, []byte(`"data-sync"`)) {
			fs.mu.Lock()
			err := ws.WritePreparedMessage(f.full.Load())
			fs.mu.Unlock()
			if err != nil {
				return nil
			}
		}
	}
}

func (f *streamFloor) broadcast(c echo.Context) error {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return c.NoContent(http.StatusBadRequest)
	}
	pm, err := websocket.NewPreparedMessage(websocket.TextMessage, body)
	if err != nil {
		return c.NoContent(http.StatusBadRequest)
	}
	f.mu.Lock()
	conns := make([]*floorStream, 0, len(f.conns))
	for fs := range f.conns {
		conns = append(conns, fs)
	}
	f.mu.Unlock()
	for _, fs := range conns {
		fs.mu.Lock()
		fs.ws.WritePreparedMessage(pm)
		fs.mu.Unlock()
	}
	return c.NoContent(http.StatusOK)
}

// registerRuntimeHandlers adds the process's memory statistics and a forced
// GC that returns freed memory, for the process measured (the server, or
// relay-fanout's relay).
func registerRuntimeHandlers(e *echo.Echo) {
	e.GET("/_bench/memory", func(c echo.Context) error { return c.JSON(http.StatusOK, readRuntimeMemory()) })
	e.POST("/_bench/gc", func(c echo.Context) error {
		runtime.GC()
		debug.FreeOSMemory()
		return c.NoContent(http.StatusOK)
	})
}

// runtimeMemory is the Go runtime's view of the server process's memory.
type runtimeMemory struct {
	HeapBytes  uint64 `json:"heapBytes"`
	StackBytes uint64 `json:"stackBytes"`
	TotalBytes uint64 `json:"totalBytes"`
	Goroutines int64  `json:"goroutines"`
}

func readRuntimeMemory() runtimeMemory {
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/stacks:bytes"},
		{Name: "/memory/classes/total:bytes"}, {Name: "/sched/goroutines:goroutines"}}
	metrics.Read(samples)
	return runtimeMemory{HeapBytes: samples[0].Value.Uint64(), StackBytes: samples[1].Value.Uint64(), TotalBytes: samples[2].Value.Uint64(),
		Goroutines: int64(samples[3].Value.Uint64())}
}
