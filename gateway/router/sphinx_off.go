//go:build noembedded

package router

import (
	"github.com/veraneural/vera-gateway/gateway/router/sphinx"
)

// sphinxBuilt says the pocketsphinx provider is absent (noembedded build).
const sphinxBuilt = false

func newSphinxProvider(sphinx.Config) (listenProvider, func() error, error) {
	return nil, nil, sphinx.ErrUnavailable
}
