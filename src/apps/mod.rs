//! Applications (config.md §6, execution.md §11–§12): the closure of files a manifest names, the content
//! pin, contracts, and the Luau runtime.
