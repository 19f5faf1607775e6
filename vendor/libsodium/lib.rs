//! Empty: this manifest exists only so that `cargo fetch` pins libsodium's source.
