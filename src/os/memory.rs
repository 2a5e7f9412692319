//! The heap's free pages returned to the kernel once serve mode is ready (docs/decisions.md "The
//! quickstart's idle memory (issue 27)").
//!
//! Startup allocates and frees far more than serving keeps (documents, their definitions, compiled
//! patterns, the templates' intermediate values). glibc gives back only the free space at the top of the
//! main heap on its own; free pages below a live allocation stay resident until a trim, so an idle gateway
//! would carry its startup's high-water mark. One trim after readiness returns them; serving allocates
//! from the arenas again as it needs.

/// Returns every whole free page of every malloc arena to the kernel (`malloc_trim(0)`), once.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn return_free_heap() {
    // The crate's second `unsafe`: an FFI call. `malloc_trim` takes no pointer, touches only glibc's own
    // arenas under their locks and is MT-Safe (malloc_trim(3)), so no Rust invariant can be broken by it;
    // its result (whether anything was released) changes nothing here.
    #[allow(unsafe_code)]
    unsafe {
        nix::libc::malloc_trim(0);
    }
}

/// Other allocators return free memory on their own terms; nothing to do.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn return_free_heap() {}
