//! Kiln baker library.
