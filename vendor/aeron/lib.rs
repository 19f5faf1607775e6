//! Empty: this manifest exists only so that `cargo fetch` pins Aeron's source.
