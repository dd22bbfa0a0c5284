package core

import "context"

// envMemoKey keys, in a request's context, the environment its check
// loaded (envMemo).
type envMemoKey struct{}

// envMemo is the environment a request loaded first, for EnvironmentOf.
type envMemo struct {
	env    EnvRow
	loaded bool
}

// RememberEnvironment returns a context of one request in which the
// environment it loads first is kept, so the check made before its body and
// the operation after it read the environment once: the operation still
// makes the check, now without a second lookup. The environment is read
// outside the operation's transaction either way.
func RememberEnvironment(ctx context.Context) context.Context {
	return context.WithValue(ctx, envMemoKey{}, &envMemo{})
}

// RememberLoadedEnvironment is RememberEnvironment with env, of the actor's
// organization, loaded already (the pages' working environment, read with
// the others the person may open), so no operation of the request reads it
// again.
func RememberLoadedEnvironment(ctx context.Context, env EnvRow) context.Context {
	return context.WithValue(ctx, envMemoKey{}, &envMemo{env: env, loaded: true})
}
