package main

import (
	"context"
	"log/slog"

	"github.com/veraneural/vera-gateway/gateway"
)

// app is the wired gateway: the HTTP edge and the packages mounted on it.
type app struct {
	srv *gateway.Server
	log *slog.Logger
}

func newApp(cfg fileConfig, log *slog.Logger) (*app, error) {
	srv, err := gateway.New(cfg.Config, gateway.Options{Logger: log})
	if err != nil {
		return nil, err
	}
	return &app{srv: srv, log: log}, nil
}

// drain ends live sessions within ctx's deadline.
func (a *app) drain(ctx context.Context) {}

// close releases what newApp built.
func (a *app) close() {}
