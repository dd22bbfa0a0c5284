package sdk

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// tokenDigits is the letter FeatBit SDKs write for each decimal digit.
const tokenDigits = "QBWSPHDXZU"

// TokenLifetime is how far a connection token's time may be from the
// server's: FeatBit's Streaming:TokenExpirySeconds default.
const TokenLifetime = 30 * time.Second

var errBadToken = errors.New("malformed connection token")

// Token builds a connection token as FeatBit's SDKs do: the secret (without
// trailing "=") with the time in milliseconds, in tokenDigits letters,
// spliced in at position start (at least 2), preceded by that position in 3
// letters and the time's length in 2.
func Token(secret string, at time.Time, start int) string {
	secret = strings.TrimRight(secret, "=")
	start = min(max(start, 2), len(secret))
	ts := encodeDigits(strconv.FormatInt(at.UnixMilli(), 10))
	return encodeDigits(fmt.Sprintf("%03d", start)) + encodeDigits(fmt.Sprintf("%02d", len(ts))) +
		secret[:start] + ts + secret[start:]
}

func encodeDigits(digits string) string {
	b := []byte(digits)
	for i, d := range b {
		b[i] = tokenDigits[d-'0']
	}
	return string(b)
}

// decodeNumber reads tokenDigits letters as a decimal number.
func decodeNumber(s string) (int64, error) {
	if s == "" || len(s) > 18 {
		return 0, errBadToken
	}
	var n int64
	for i := range len(s) {
		d := strings.IndexByte(tokenDigits, s[i])
		if d < 0 {
			return 0, errBadToken
		}
		n = n*10 + int64(d)
	}
	return n, nil
}

// ParseToken reads a connection token: the secret it carries (padded with
// "=" to a multiple of 4, as FeatBit reads it) and the time it was made.
// The secret must be 44 characters, the format of every FeatBit secret.
func ParseToken(token string) (secret string, at time.Time, err error) {
	if len(token) < 5 {
		return "", time.Time{}, errBadToken
	}
	position, err := decodeNumber(token[0:3])
	if err != nil || position > 255 { // FeatBit parses the position as a byte
		return "", time.Time{}, errBadToken
	}
	length, err := decodeNumber(token[3:5])
	if err != nil {
		return "", time.Time{}, errBadToken
	}
	payload := token[5:]
	if int64(len(payload)) < position+length {
		return "", time.Time{}, errBadToken
	}
	ms, err := decodeNumber(payload[position : position+length])
	if err != nil {
		return "", time.Time{}, errBadToken
	}
	secret = payload[:position] + payload[position+length:]
	if pad := len(secret) % 4; pad != 0 {
		secret += strings.Repeat("=", 4-pad)
	}
	if len(secret) != 44 {
		return "", time.Time{}, errBadToken
	}
	return secret, time.UnixMilli(ms), nil
}

// tokenFresh reports whether a token made at at may still be used at now.
func tokenFresh(at, now time.Time) bool {
	d := now.Sub(at)
	return d <= TokenLifetime && d >= -TokenLifetime
}
