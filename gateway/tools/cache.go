package tools

import (
	"container/list"
	"crypto/sha256"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// maxCached bounds the compiled schemas kept: every partner's tools fit
// many times over, and an old version ages out.
const maxCached = 1024

// cacheKey is a partner and the SHA-256 of a compact schema. The partner is
// part of the key so no partner can learn, from how fast a PUT answers, that
// another partner registered the same schema.
type cacheKey struct {
	partner string
	digest  [sha256.Size]byte
}

type cached struct {
	key cacheKey
	sch *jsonschema.Schema
	err error // a refused schema is refused again without compiling
}

// schemaCache is an LRU of compile results by cacheKey.
type schemaCache struct {
	mu    sync.Mutex // mu guards order and byKey
	order *list.List // of *cached, most recently used first
	byKey map[cacheKey]*list.Element
}

func newSchemaCache() *schemaCache {
	return &schemaCache{order: list.New(), byKey: map[cacheKey]*list.Element{}}
}

func keyOf(partner string, raw []byte) cacheKey {
	return cacheKey{partner: partner, digest: sha256.Sum256(raw)}
}

func (c *schemaCache) get(k cacheKey) (*cached, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[k]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cached), true
}

func (c *schemaCache) put(v *cached) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[v.key]; ok {
		e.Value = v
		c.order.MoveToFront(e)
		return
	}
	c.byKey[v.key] = c.order.PushFront(v)
	for c.order.Len() > maxCached {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byKey, last.Value.(*cached).key)
	}
}

func (c *schemaCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
