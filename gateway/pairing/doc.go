// Package pairing lets a device that is set up once, by a fixed URL, keep
// talking to the gateway although client tokens live a minute: the Meta
// Ray-Ban Display web app at GET /glasses is the first such device.
//
// The flow has three steps. The partner's server (holding its key) asks
// POST /v1/pairings for a one-time code bound to one end_user_id and one
// device profile; the partner's phone app shows it. The device sends the
// code once to POST /v1/pairings/exchange and gets a client token plus a
// refresh credential bound to that end user and device. Before each
// connection it trades the refresh credential at POST /v1/pairings/refresh
// for a fresh client token and the next refresh credential (rotation). The
// partner ends a pairing with DELETE /v1/pairings/{id}.
//
// Invariants:
//   - A code is single use: the first exchange consumes it, whether it
//     succeeds or names the wrong device (a code presented by another kind
//     of device has leaked; it is burnt). It expires after
//     Config.CodeTTLSeconds. A new code for the same end user and device
//     replaces the unused one.
//   - Codes are 8 symbols of Crockford base32 (40 bits), compared by
//     SHA-256; exchange and refresh attempts are rate limited per client
//     address, so guessing a live code is out of reach.
//   - Refresh credentials are stored only as SHA-256 digests. Each refresh
//     returns a new one; the previous stays valid for
//     Config.RotationGraceSeconds or until the new one is used (an answer
//     lost on a bad link must not unpair the glasses). Presenting any older
//     one revokes the pairing: a copied credential is worth one race.
//   - Tokens minted here are ordinary client tokens (gateway.TokenIssuer):
//     bound to the partner, the end user and the device, scope
//     sessions:write, so the websocket refuses another device's hello and
//     another end user's session exactly as for tokens from
//     POST /v1/client_tokens.
//   - A pairing not refreshed for Config.RefreshIdleDays expires.
//   - In a cluster, codes, pairings and the per-address buckets are in
//     Redis (RedisCodes, RedisStore, the cluster's RateLimiter): a code
//     issued through one node is exchanged through any, its claim is one
//     atomic script (of two exchanges racing on two nodes exactly one
//     wins), and an address's attempts count once across the nodes.
//
// The package starts no goroutines: expired codes and pairings are swept
// lazily by the requests themselves. Codes live in a CodeStore — in memory
// (a restart asks the partner for a new one) or in Redis; pairings live in
// a Store — in memory, in the gateway's bbolt file so that paired glasses
// survive a restart, or in Redis.
package pairing
