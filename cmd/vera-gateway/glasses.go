package main

import (
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/pairing"
	"github.com/veraneural/vera-gateway/gateway/web"
)

// mountGlasses adds the Meta Ray-Ban Display web app at /glasses and the
// pairing endpoints that keep it connected although client tokens live a
// minute. Pairings live in the gateway's bbolt file (in a cluster, in
// Redis, with the codes), so paired glasses survive a restart (with
// store.path set).
func (a *app) mountGlasses(reg prometheus.Registerer) error {
	cfg := a.srv.Config()
	app, err := web.NewGlasses(web.GlassesOptions{DevMode: cfg.DevMode()})
	if err != nil {
		return err
	}
	svc, err := pairing.New(pairing.DefaultConfig(), a.pairings, a.cluster.Pairing(pairing.Options{
		Tokens: a.srv.Tokens(), TokenTTL: time.Duration(cfg.Auth.TokenTTLSeconds) * time.Second,
		ValidateDevice: func(id string) error { _, err := devices.Lookup(id); return err },
		Logger:         a.log.With("pkg", "pairing"), Registerer: reg,
	}))
	if err != nil {
		return fmt.Errorf("pairing: %w", err)
	}
	for _, rt := range svc.Routes() {
		a.srv.Mount(rt)
	}
	a.srv.Mount(gateway.Route{Method: http.MethodGet, Path: web.GlassesPath, NoRateLimit: true, Handler: app})
	a.srv.Mount(gateway.Route{Method: http.MethodGet, Path: web.GlassesPath + "/", Prefix: true, NoRateLimit: true,
		Undocumented: true, Handler: app})
	return nil
}
