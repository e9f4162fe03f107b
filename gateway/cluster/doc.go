// Package cluster makes the gateway a cluster of equal nodes on Redis
// (BRIEF §10). Media and a session's live state stay on the node that
// answered its SDP or accepted its websocket; what must be shared lives in
// Redis, through the stores' Redis implementations (inbox, webhook, audit,
// tools, rate limits, idempotency) built on Cluster.Redis, and this
// package's session directory.
//
// Invariants:
//   - A node record (vera:node:<id>) and every directory entry
//     (vera:dir:<kind>:<id> → owner node, its address, partner, end user,
//     build version, protocol, expiry) live two heartbeats unless refreshed;
//     one pipeline per heartbeat refreshes them all. A killed node's
//     sessions leave the directory within two heartbeats; an approved
//     action's entry (kept 24 h) is checked against its node's record.
//   - Start-up fails when Redis does not answer, when a live node has this
//     node_id, or when a live node speaks another Protocol.
//   - A request for an id another node owns is forwarded there (Owned) as
//     a POST to InternalPath signed with the cluster secret: HMAC-SHA256
//     over the method, path, body digest, timestamp, a nonce, sender, receiver and
//     the caller's verified principal, accepted once within a 30 s window.
//     The partner's key never travels. The owner runs the route's own
//     handler, so its ownership rules (another partner's or person's
//     session is 404) hold wherever the request arrived. A forged, stale,
//     replayed or misaddressed forward is 401. An owner that cannot be
//     dialled is dead: its entry is dropped and the caller gets 404.
//   - While the node cannot reach Redis, or drains, /readyz is 503 and new
//     sessions get 503 with Retry-After (Admit); live calls keep their
//     media, which never touches Redis.
//   - Fair shares (Shares) are counted across the live nodes: a node's
//     counts live in one hash that lapses two heartbeats after its last
//     heartbeat, so a killed node never keeps a share.
//
// Goroutines: the heartbeat loop, the directory's forget loop, the safety
// counters' flush loop and the fair shares' release loop, each owned by
// the Cluster and joined by Close (or Kill, the crash a test simulates). A nil *Cluster is one node alone:
// its methods pass routes and handlers through unchanged.
package cluster
