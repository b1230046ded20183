//go:build soak

package server

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// soakFor is how long the soak's clients work.
const soakFor = 60 * time.Second

// openFDs counts the process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("reading /proc/self/fd: %v", err)
	}
	return len(ents)
}

// heapInuse is the heap in use after a full collection, less what the
// Arrow buffer allocator keeps for reuse (at most its 64 MiB cap, by
// design).
func heapInuse() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	arrowMem.mu.Lock()
	kept := int64(arrowMem.kept)
	arrowMem.mu.Unlock()
	return int64(ms.HeapInuse) - kept
}

// The soak (make soak, not make test): 20 connections with 5 sessions
// each step and stream for a minute, then close. Goroutines, open file
// descriptors and the heap must come back to what they were before.
func TestSoak(t *testing.T) {
	const conns, perConn = 20, 5
	srv, url := newTestServer(t, Options{})
	baseG, baseFD, baseHeap := runtime.NumGoroutine(), openFDs(t), heapInuse()
	t.Logf("baseline: %d goroutines, %d fds, heap %d MiB", baseG, baseFD, baseHeap>>20)
	var steps, pushes, reopens atomic.Int64
	var peakG atomic.Int64
	stopAt := time.Now().Add(soakFor)
	var wg sync.WaitGroup
	for ci := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := dial(t, url)
			c.wait = time.Minute
			open := func(i int) string {
				id := c.call("open", map[string]any{"scenario": "p-rtr-p", "seed": ci*perConn + i,
					"set": []any{"runtime.duration=2s", "trace.detail=change"}})["session"].(string)
				c.call("subscribe", map[string]any{"session": id, "tables": []any{"flows", "queue"}, "every_ms": 50})
				return id
			}
			ids := make([]string, perConn)
			for i := range ids {
				ids[i] = open(i)
			}
			for time.Now().Before(stopAt) {
				var ended []int
				pending := map[uint64]int{}
				for i, id := range ids {
					pending[c.send("step", map[string]any{"session": id, "time": "50ms"})] = i
				}
				for len(pending) > 0 {
					m := c.next()
					if _, ok := m["stream"]; ok {
						pushes.Add(1)
						continue
					}
					i, ok := pending[uint64(asInt(m["id"]))]
					if !ok || m["ok"] != true {
						t.Errorf("step: %v", m)
						return
					}
					delete(pending, uint64(asInt(m["id"])))
					steps.Add(1)
					if res := m["result"].(map[string]any); res["done"] == true {
						ended = append(ended, i)
					}
				}
				for _, i := range ended {
					c.call("close", map[string]any{"session": ids[i]})
					ids[i] = open(i)
					reopens.Add(1)
				}
				if g := int64(runtime.NumGoroutine()); g > peakG.Load() {
					peakG.Store(g)
				}
			}
			for _, id := range ids {
				c.call("close", map[string]any{"session": id})
			}
			c.ws.Close()
		}()
	}
	wg.Wait()
	t.Logf("%d connections × %d sessions for %v: %d steps of 50 ms answered, %d pushes, %d sessions reopened at their end; peak %d goroutines",
		conns, perConn, soakFor, steps.Load(), pushes.Load(), reopens.Load(), peakG.Load())
	var g, fd int
	var heap int64
	deadline := time.Now().Add(10 * time.Second)
	for {
		srv.mu.Lock()
		live := len(srv.conns) + len(srv.sessions)
		srv.mu.Unlock()
		g, fd, heap = runtime.NumGoroutine(), openFDs(t), heapInuse()
		if live == 0 && g <= baseG && fd <= baseFD && heap <= baseHeap+16<<20 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	arrowMem.mu.Lock()
	kept := arrowMem.kept
	arrowMem.mu.Unlock()
	t.Logf("after close: %d goroutines (baseline %d), %d fds (baseline %d), heap %d MiB (baseline %d MiB) besides %d MiB of Arrow buffers kept for reuse, decode pool %d bytes",
		g, baseG, fd, baseFD, heap>>20, baseHeap>>20, kept>>20, srv.decoded.inUse())
	if g > baseG || fd > baseFD {
		t.Errorf("after close: %d goroutines and %d fds, want at most the baseline %d and %d", g, fd, baseG, baseFD)
	}
	if heap > baseHeap+16<<20 {
		t.Errorf("after close: heap %d MiB, want within 16 MiB of the baseline %d MiB", heap>>20, baseHeap>>20)
	}
	if n := srv.decoded.inUse(); n != 0 {
		t.Errorf("decode pool holds %d bytes after every request was answered, want 0", n)
	}
}
