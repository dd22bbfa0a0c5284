package core

import (
	"encoding/base64"
	"strings"

	"github.com/google/uuid"
)

// NewSecretValue returns an environment secret as FeatBit SDKs understand it:
// 22 characters encoding a fresh random uuid, then 22 encoding the environment
// id, so an evaluation server can read the environment from
// characters 22 to 44.
func NewSecretValue(envID uuid.UUID) string {
	return encodeGUID(uuid.New()) + encodeGUID(envID)
}

// SecretEnvID reads the environment id out of a secret value.
func SecretEnvID(secret string) (uuid.UUID, bool) {
	if len(secret) != 44 {
		return uuid.Nil, false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.NewReplacer("-", "+", "_", "/").Replace(secret[22:]) + "==")
	if err != nil || len(raw) != 16 {
		return uuid.Nil, false
	}
	return fromGUIDBytes(raw), true
}

// encodeGUID is .NET's Guid.ToByteArray (first three groups little-endian),
// standard base64 with "+" → "-" and "/" → "_", cut to 22 characters.
func encodeGUID(id uuid.UUID) string {
	b := guidBytes(id)
	s := base64.StdEncoding.EncodeToString(b[:])
	return strings.NewReplacer("+", "-", "/", "_").Replace(s[:22])
}

func guidBytes(id uuid.UUID) [16]byte {
	var b [16]byte
	b[0], b[1], b[2], b[3] = id[3], id[2], id[1], id[0]
	b[4], b[5] = id[5], id[4]
	b[6], b[7] = id[7], id[6]
	copy(b[8:], id[8:])
	return b
}

func fromGUIDBytes(b []byte) uuid.UUID {
	var id uuid.UUID
	id[0], id[1], id[2], id[3] = b[3], b[2], b[1], b[0]
	id[4], id[5] = b[5], b[4]
	id[6], id[7] = b[7], b[6]
	copy(id[8:], b[8:])
	return id
}
