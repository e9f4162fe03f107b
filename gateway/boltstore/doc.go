// Package boltstore holds what the gateway's durable stores share: the one
// bbolt file (config key store.path) in which the inbox queue, the webhook
// queue and the decision audit each keep their own buckets, and the
// sequence keys that order their records.
//
// Invariants:
//   - cmd opens the file once (Open) and owns it; the packages' stores are
//     built on the open *bolt.DB and never close it.
//   - A bucket name belongs to one package (inbox.*, webhook.*, audit.*);
//     Buckets creates them idempotently.
//   - SeqKey is big-endian, so byte order is sequence order: a cursor walks
//     records oldest first.
package boltstore
