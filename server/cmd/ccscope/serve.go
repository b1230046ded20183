package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/ccscope/ccscope/server"
)

// serveMain runs `ccscope serve`: it prints the connection URL on stdout
// and serves until SIGINT or SIGTERM. It returns the exit status.
func serveMain(args []string) int {
	return serve(args, os.Stdout, os.Stderr, shutdownSignals())
}

// shutdownSignals is closed on the first SIGINT or SIGTERM.
func shutdownSignals() <-chan struct{} {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { <-ch; close(done) }()
	return done
}

// serve is serveMain with its outputs and stop signal passed in, for tests.
func serve(args []string, stdout, stderr io.Writer, stop <-chan struct{}) int {
	fs := flag.NewFlagSet("ccscope serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8765", "listen address HOST:PORT (port 0: any free port)")
	unixPath := fs.String("unix", "", "listen on a Unix-domain socket at this path instead of --addr (owner-only; the URL is ws+unix://PATH)")
	token := fs.String("token", "", "access token clients must present (default: a random one, printed)")
	noToken := fs.Bool("insecure-no-token", false, "accept clients without a token (loopback addresses only)")
	maxSessions := fs.Int("max-sessions", 256, "maximum sessions on the server")
	maxPerConn := fs.Int("max-sessions-per-conn", 64, "maximum sessions per connection")
	maxEvents := fs.Uint64("max-events", 1e10, "maximum events a session may dispatch")
	maxMsg := fs.Int64("max-message-bytes", 16<<20, "maximum request size in bytes")
	idle := fs.Duration("idle-timeout", 30*time.Minute, "close sessions untouched for this long, and connections with no session")
	maxNodes := fs.Int("max-nodes", 10_000, "maximum nodes in a session's scenario")
	maxLinks := fs.Int("max-links", 20_000, "maximum links in a session's scenario")
	maxFlows := fs.Int("max-flows", 10_000, "maximum flows in a session's scenario")
	maxChanges := fs.Int("max-changes", 100_000, "maximum scheduled changes in a session's scenario")
	maxSessBytes := fs.Int64("max-session-bytes", 1<<30, "maximum estimated memory of one session, checked before it is built")
	maxBuilds := fs.Int("max-builds", runtime.GOMAXPROCS(0), "session builds (open, restore, fork) running at once")
	maxReplay := fs.Duration("max-replay-time", 2*time.Minute, "wall-time budget of one restore or fork replay")
	maxDecoded := fs.Int64("max-decoded-bytes", 0, "maximum estimated heap of one request's decoded arguments (default 4 × --max-message-bytes)")
	logFormat := fs.String("log-format", "", "log format on stderr: json or console (default: console on a terminal, else json)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: ccscope serve [options]\n\nServes simulation sessions over websocket + msgpack (proto/README.md) and prints the URL to connect to.\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "ccscope serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if err := checkLimits(fs, "max-decoded-bytes"); err != nil {
		fmt.Fprintln(stderr, "ccscope serve: "+strings.ReplaceAll(err.Error(), "\n", "\nccscope serve: "))
		return 2
	}
	log, err := newLogger(*logFormat, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "ccscope serve: %v\n", err)
		return 2
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil {
		fmt.Fprintf(stderr, "ccscope serve: --addr %q: %v\n", *addr, err)
		return 2
	}
	if *noToken {
		if *token != "" {
			fmt.Fprintln(stderr, "ccscope serve: --token and --insecure-no-token contradict each other")
			return 2
		}
		if !isLoopback(host) {
			fmt.Fprintf(stderr, "ccscope serve: refusing --insecure-no-token on %s, which is not a loopback address\n", host)
			return 2
		}
	} else if *token == "" {
		*token = newToken()
	}
	srv, err := server.New(server.Options{Token: *token, InsecureNoToken: *noToken, MaxSessions: *maxSessions,
		MaxSessionsPerConn: *maxPerConn, MaxEvents: *maxEvents, MaxMessageBytes: *maxMsg, IdleTimeout: *idle,
		MaxNodes: *maxNodes, MaxLinks: *maxLinks, MaxFlows: *maxFlows, MaxChanges: *maxChanges,
		MaxSessionBytes: *maxSessBytes, MaxBuilds: *maxBuilds, MaxReplayTime: *maxReplay, MaxDecodedBytes: *maxDecoded,
		Logger: &log})
	if err != nil {
		fmt.Fprintf(stderr, "ccscope serve: %v\n", err)
		return 2
	}
	ln, url, err := listen(*addr, *unixPath)
	if err != nil {
		fmt.Fprintf(stderr, "ccscope serve: %v\n", err)
		return 1
	}
	if *token != "" {
		url += "?token=" + *token
	}
	fmt.Fprintf(stdout, "ccscope serving at %s\n", url)
	log.Info().Str("addr", ln.Addr().String()).Msg("serving")
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		log.Error().Err(err).Msg("server failed")
		return 1
	case <-stop:
	}
	log.Info().Msg("shutting down")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = hs.Shutdown(ctx)
	if err := srv.Shutdown(ctx); err != nil {
		log.Warn().Err(err).Msg("sessions did not end in time")
	}
	log.Info().Msg("stopped")
	return 0
}

// checkLimits refuses every numeric flag (each of serve's is a limit)
// that is zero or negative, naming the flag: server.Options would take a
// zero for its default, and a limit of nothing, or less, is a mistake to
// report rather than to serve with the default. The flags in zeroOK
// document 0 as their default.
func checkLimits(fs *flag.FlagSet, zeroOK ...string) error {
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		g, ok := f.Value.(flag.Getter)
		if !ok {
			return
		}
		var n int64
		want := "a positive number"
		switch v := g.Get().(type) {
		case int:
			n = int64(v)
		case int64:
			n = v
		case uint64:
			n = int64(min(v, 1))
		case time.Duration:
			n, want = int64(v), "a positive duration"
		default:
			return
		}
		zero := slices.Contains(zeroOK, f.Name)
		if zero {
			want += ", or 0 for the default"
		}
		if n < 0 || n == 0 && !zero {
			errs = append(errs, fmt.Errorf("--%s %s: want %s", f.Name, f.Value, want))
		}
	})
	return errors.Join(errs...)
}

// listen opens the server's listener: TCP at addr, or with unixPath a
// Unix-domain socket there, readable and writable by its owner only. A
// client on the same host reaches the socket without the TCP stack: a
// learning loop's request and response cost about a third of the kernel
// time they cost over loopback TCP. The URL is ws://HOST:PORT/ or
// ws+unix://PATH (the websocket resource is then /).
func listen(addr, unixPath string) (net.Listener, string, error) {
	if unixPath == "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, "", err
		}
		return ln, "ws://" + ln.Addr().String() + "/", nil
	}
	abs, err := filepath.Abs(unixPath)
	if err != nil {
		return nil, "", fmt.Errorf("--unix %q: %w", unixPath, err)
	}
	ln, err := net.Listen("unix", abs)
	if err != nil {
		return nil, "", err
	}
	if err := os.Chmod(abs, 0o600); err != nil {
		ln.Close()
		return nil, "", fmt.Errorf("--unix %q: %w", unixPath, err)
	}
	return ln, "ws+unix://" + abs, nil
}

// isLoopback reports whether host names the loopback interface.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// newToken is 128 random bits in hex, as Jupyter's tokens are.
func newToken() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("ccscope serve: no randomness for a token: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// newLogger writes JSON lines, or console lines when asked or when stderr
// is a terminal.
func newLogger(format string, w io.Writer) (zerolog.Logger, error) {
	if format == "" {
		format = "json"
		if f, ok := w.(*os.File); ok {
			if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
				format = "console"
			}
		}
	}
	switch format {
	case "json":
		return zerolog.New(w).With().Timestamp().Logger(), nil
	case "console":
		return zerolog.New(zerolog.ConsoleWriter{Out: w}).With().Timestamp().Logger(), nil
	}
	return zerolog.Logger{}, fmt.Errorf("--log-format %q: want json or console", format)
}
