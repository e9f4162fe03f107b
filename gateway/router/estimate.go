package router

// Token estimate used to skip models whose context window cannot hold a
// request. It over-counts on purpose: one token per 3 bytes (English runs
// near 4 characters per token, and a CJK character is 3 bytes and about
// one token), plus a fixed overhead per message for role and framing.
const (
	bytesPerToken      = 3
	tokensPerMessage   = 4
	tokensPerRequest   = 3
	defaultOutputToken = 256 // reserved when neither request nor model names a bound
)

// estimateTokens returns the tokens a request needs: its prompt plus the
// output reserved for the reply.
func estimateTokens(system string, msgs []Message, output int) int {
	n := tokensPerRequest + output
	if system != "" {
		n += tokensPerMessage + (len(system)+bytesPerToken-1)/bytesPerToken
	}
	for _, m := range msgs {
		n += tokensPerMessage + (len(m.Role)+len(m.Text)+bytesPerToken-1)/bytesPerToken
	}
	return n
}

// outputTokens is what a request may produce on a model: the request's
// bound capped by the model's, or the model's, or a default.
func outputTokens(req int, m ModelConfig) int {
	switch {
	case req > 0 && m.MaxOutputTokens > 0:
		return min(req, m.MaxOutputTokens)
	case req > 0:
		return req
	case m.MaxOutputTokens > 0:
		return m.MaxOutputTokens
	}
	return defaultOutputToken
}
