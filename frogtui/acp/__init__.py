"""``frogtui acp``: frogtui as an Agent Client Protocol agent (JSON-RPC 2.0 over stdio) for Zed,
JetBrains, Neovim (CodeCompanion, avante.nvim) and Toad. See docs/ACP.md.

Nothing here is imported by the rest of frogtui; ``frogtui.acp.cli`` guards the protocol's stdout
before anything heavy is imported."""
