// Package main is the vera-gateway command: it runs VERA's live-voice and glasses edge. It is the
// only place that reads flags, environment variables and files: it loads
// the YAML config strictly, applies VERA_* overrides, wires the packages and
// handles SIGINT/SIGTERM by draining.
//
//	vera-gateway [-config FILE] [-listen ADDR] [-print-config]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/rtc"
	"github.com/veraneural/vera-gateway/gateway/webhook"
	"github.com/veraneural/vera-gateway/gateway/yamlconf"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "vera-gateway:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("vera-gateway", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "YAML config `file` (none: embedded defaults)")
	listen := fs.String("listen", "", "listen `address`, overrides the config's listen")
	printConfig := fs.Bool("print-config", false, "print the effective config with secrets redacted, then exit")
	recordDir := fs.String("record-dir", "", "record every voice session (Ogg Opus both ways, events) into `DIR`/<session id>/, overriding voice.record_dir; records people's voices, see the README")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected arguments: %v\n", fs.Args())
		return errUsage
	}
	cfg, used, err := loadConfig(*configPath, *listen, getenv)
	if err != nil {
		return err
	}
	if *recordDir != "" {
		cfg.Voice.RecordDir = *recordDir
		if err := cfg.Voice.Validate(); err != nil {
			return fmt.Errorf("-record-dir: voice: %w", err)
		}
	}
	if *printConfig {
		return printRedacted(stdout, cfg)
	}

	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(cfg.LogLevel))
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl}))
	if cfg.Voice.RecordDir != "" {
		log.Warn("recording every voice session: people's voices are stored", "record_dir", cfg.Voice.RecordDir)
	}

	a, err := newApp(cfg, getenv, log)
	if err != nil {
		return err
	}
	defer a.close()

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	// The edge's bounds: header, body, write and idle timeouts, header
	// size, and the per-source connection cap with trusted proxies.
	httpSrv := a.srv.HTTPServer()
	serveErr := make(chan error, 2)
	go func() { serveErr <- httpSrv.Serve(a.srv.Listener(ln)) }()

	var debugSrv *http.Server
	if cfg.DebugListen != "" {
		dln, err := net.Listen("tcp", cfg.DebugListen)
		if err != nil {
			_ = httpSrv.Close()
			return fmt.Errorf("debug_listen: %w", err)
		}
		debugSrv = &http.Server{Handler: gateway.DebugHandler(), ReadHeaderTimeout: 10 * time.Second}
		go func() { serveErr <- debugSrv.Serve(dln) }()
		log.Info("debug listener", "addr", dln.Addr().String())
	}
	// What a first run needs to know: where to point a browser or a
	// client, where media goes, and what answers each model slot.
	base := "http://" + ln.Addr().String()
	log.Info("vera-gateway listening", "addr", ln.Addr().String(), "dev_mode", cfg.DevMode(), "env_overrides", used,
		"web_client", base+"/", "glasses", base+"/glasses", "voice", base+rtc.DefaultBasePath, "media", a.engine)
	log.Info("models answering", "slots", a.router)

	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}

	shutdown(a, cfg, log, httpSrv, debugSrv)
	return nil
}

// printRedacted writes the effective config as YAML with every secret
// redacted (-print-config); the caller's config is not touched.
func printRedacted(w io.Writer, cfg fileConfig) error {
	shown := cfg
	shown.Auth.Keys = append([]keyConfig(nil), cfg.Auth.Keys...)
	for i := range shown.Auth.Keys {
		shown.Auth.Keys[i].Webhooks = append([]webhook.Endpoint(nil), shown.Auth.Keys[i].Webhooks...)
	}
	shown.Webhooks = append([]webhook.Endpoint(nil), cfg.Webhooks...)
	yamlconf.Redact(&shown)
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	defer enc.Close()
	return enc.Encode(shown)
}

// shutdown drains: readyz goes false, new sessions get 503, live ones get
// the grace; then the listeners close.
func shutdown(a *app, cfg fileConfig, log *slog.Logger, httpSrv, debugSrv *http.Server) {
	grace := time.Duration(cfg.ShutdownGraceMS) * time.Millisecond
	log.Info("draining", "grace", grace)
	a.srv.StartDrain()
	dctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	a.drain(dctx)
	sctx, cancel2 := context.WithTimeout(context.Background(), time.Second)
	defer cancel2()
	if err := httpSrv.Shutdown(sctx); err != nil {
		_ = httpSrv.Close()
	}
	if debugSrv != nil {
		_ = debugSrv.Close()
	}
	log.Info("stopped")
}
