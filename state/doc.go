// Package state keeps Terraform state in a gzip-compressed Secret beside the instance it belongs
// to (split across chunk Secrets when large), and refuses any write that would move it backwards
// (another lineage, a lower serial) or overwrite a version written meanwhile. A state lives in its
// tenant's namespace, so what is read is checked before it is trusted: a store with keys signs
// every state it writes and refuses any other (KeyRing, keys in the controller's namespace), and
// every read is bounded (MaxBytes decompressed, MaxChunks chunk Secrets, chunk lists only as the
// writer makes them). Store.Accept signs a state a cluster admin reviewed, and only the state
// reviewed: the bytes and the Secret's resourceVersion its ReviewDigest names. Locker holds one
// Lease per state so that one run at a time uses it. Plans keeps the readable plan of an instance
// that waits for approval in a Secret beside its state.
// Recent answers a controller's polls from the summary of the last full read while the state
// Secret's resourceVersion has not moved.
package state
