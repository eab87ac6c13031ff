package proof

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/loki-sh/loki/internal/canonjson"
)

// GPG is the signature verdict: not applicable (no detached signature, or
// no gpg to check it with), good, or bad.
type GPG int

const (
	GPGNotApplicable GPG = iota
	GPGGood
	GPGBad
)

// JSONValue is "n/a", true or false, as the reference writes gpg_ok.
func (g GPG) JSONValue() any {
	switch g {
	case GPGGood:
		return true
	case GPGBad:
		return false
	}
	return "n/a"
}

// Integrity is the verdict on one receipt. Checked distinguishes a real
// verification (which also reports reasons and cost_coherent) from the
// placeholder of a receipt that was never verified, whose JSON has exactly
// the reference's empty_integrity_result fields.
type Integrity struct {
	Checked            bool
	HashOK             bool
	GPG                GPG
	HeadlineConsistent *bool    // nil: no headline claimed, or no facts to derive one from
	Degraded           []string // the degraded facts that count against the headline
	Reasons            []string // why OK is false; empty when OK
	CostCoherent       *bool    // nil: the receipt has no cost
	OK                 bool
}

// GeneratorTrusted is true unless a signature proved who wrote the
// receipt: without one, the verdict rests on trusting its generator.
func (i Integrity) GeneratorTrusted() bool { return i.GPG != GPGGood }

// Reason is the first reason, or "" when the receipt is ok.
func (i Integrity) Reason() string {
	if len(i.Reasons) == 0 {
		return ""
	}
	return i.Reasons[0]
}

func optBool(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}

// JSONValue is the integrity object of state.json and of verify-proof.
func (i Integrity) JSONValue() any {
	m := map[string]any{
		"hash_ok":             i.HashOK,
		"gpg_ok":              i.GPG.JSONValue(),
		"generator_trusted":   i.GeneratorTrusted(),
		"headline_consistent": optBool(i.HeadlineConsistent),
		"degraded":            nonNil(i.Degraded),
		"reason":              i.Reason(),
		"ok":                  i.OK,
	}
	if i.Checked {
		m["reasons"] = nonNil(i.Reasons)
		m["cost_coherent"] = optBool(i.CostCoherent)
	}
	return m
}

// MarshalJSON lets encoding/json callers get the same object.
func (i Integrity) MarshalJSON() ([]byte, error) { return canonjson.Marshal(i.JSONValue()) }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// EmptyIntegrity is the verdict of a receipt that was not verified.
func EmptyIntegrity(reason string) Integrity {
	return Integrity{Reasons: []string{reason}}
}

// Signature is a detached signature over the exact receipt bytes.
type Signature struct {
	Data []byte // the receipt file as read
	Sig  []byte // nil: no signature
}

// Verify checks a parsed receipt. The order of the reasons is the order
// of the checks: hash, signature, headline, cost.
func Verify(doc map[string]any, sig Signature) Integrity {
	in := Integrity{Checked: true, Degraded: []string{}, Reasons: []string{}}
	var reason string
	in.HashOK, reason = checkHash(doc)
	in.addReason(reason)
	in.GPG = checkGPG(sig)
	if in.GPG == GPGBad {
		in.addReason("detached GPG signature does not verify")
	}
	facts, _ := doc["facts"].(map[string]any)
	in.Degraded = countingDegraded(facts)
	in.HeadlineConsistent, reason = checkHeadline(doc, facts)
	in.addReason(reason)
	in.CostCoherent, reason = checkCost(doc)
	in.addReason(reason)
	in.OK = in.HashOK && in.GPG != GPGBad &&
		(in.HeadlineConsistent == nil || *in.HeadlineConsistent) &&
		(in.CostCoherent == nil || *in.CostCoherent)
	return in
}

func (i *Integrity) addReason(r string) {
	if r != "" {
		i.Reasons = append(i.Reasons, r)
	}
}

// checkHash recomputes verification.hash: SHA-256 hex of the canonical JSON
// of the receipt without its top-level "verification" key.
func checkHash(doc map[string]any) (bool, string) {
	ver, _ := doc["verification"].(map[string]any)
	claimed, ok := ver["hash"].(string)
	if !ok || claimed == "" {
		return false, "verification.hash is missing"
	}
	body := make(map[string]any, len(doc))
	for k, v := range doc {
		if k != "verification" {
			body[k] = v
		}
	}
	canon, err := canonjson.Marshal(body)
	if err != nil {
		return false, fmt.Sprintf("receipt cannot be canonicalised: %v", err)
	}
	sum := sha256.Sum256(canon)
	if hex.EncodeToString(sum[:]) != claimed {
		return false, "verification.hash does not match the receipt"
	}
	return true, ""
}

// checkHeadline compares every headline the receipt claims (top-level
// "headline" and "honesty.headline") with the one derived from its facts.
func checkHeadline(doc, facts map[string]any) (*bool, string) {
	var claims []string
	if h, ok := doc["headline"].(string); ok && h != "" {
		claims = append(claims, h)
	}
	if honesty, ok := doc["honesty"].(map[string]any); ok {
		if h, ok := honesty["headline"].(string); ok && h != "" {
			claims = append(claims, h)
		}
	}
	if facts == nil || len(claims) == 0 {
		return nil, ""
	}
	derived := Derive(facts)
	for _, c := range claims {
		if c != derived {
			f := false
			return &f, fmt.Sprintf("headline %q is not what the facts support (%q)", c, derived)
		}
	}
	t := true
	return &t, ""
}

// checkCost: "available" must match the presence of figures, and a price
// needs the token counts it was computed from.
func checkCost(doc map[string]any) (*bool, string) {
	raw, present := doc["cost"]
	if !present || raw == nil {
		return nil, ""
	}
	verdict := func(ok bool, reason string) (*bool, string) { return &ok, reason }
	cost, ok := raw.(map[string]any)
	if !ok {
		return verdict(false, "cost is not an object")
	}
	tokens := hasTokens(cost)
	usd := isNumber(cost["usd"])
	available, _ := cost["available"].(bool)
	_, hasAvailable := cost["available"].(bool)
	switch {
	case hasAvailable && available && !tokens && !usd:
		return verdict(false, "cost is available but reports neither tokens nor usd")
	case hasAvailable && !available && (tokens || usd):
		return verdict(false, "cost is unavailable but reports figures")
	case usd && !tokens:
		return verdict(false, "cost reports usd without tokens")
	}
	return verdict(true, "")
}

// hasTokens: a token count as "tokens" (a number, or an object holding
// one) or as input_tokens / output_tokens / total_tokens.
func hasTokens(cost map[string]any) bool {
	switch t := cost["tokens"].(type) {
	case map[string]any:
		for _, v := range t {
			if isNumber(v) {
				return true
			}
		}
	default:
		if isNumber(t) {
			return true
		}
	}
	for _, k := range []string{"input_tokens", "output_tokens", "total_tokens"} {
		if isNumber(cost[k]) {
			return true
		}
	}
	return false
}
