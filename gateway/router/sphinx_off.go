//go:build noembedded

package router

import (
	"context"

	"github.com/veraneural/vera-gateway/gateway/router/sphinx"
)

// sphinxBuilt says the pocketsphinx provider is absent (noembedded build).
const sphinxBuilt = false

func newSphinxProvider(sphinx.Config) (listenProvider, func() error, error) {
	return nil, nil, sphinx.ErrUnavailable
}

// spotter is absent in noembedded builds: turns are not spotted.
type spotter struct{}

type spotStream struct{}

func newSpotter(sphinx.Config) (*spotter, func() error, error) {
	return nil, nil, sphinx.ErrUnavailable
}

func (*spotter) start(context.Context) (*spotStream, error) { return nil, sphinx.ErrUnavailable }
func (*spotStream) write([]int16) error                     { return sphinx.ErrUnavailable }
func (*spotStream) end() ([]string, error)                  { return nil, sphinx.ErrUnavailable }
func (*spotStream) close()                                  {}
