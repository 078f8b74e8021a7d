"""The fpcheck GitHub Action's steps, one module per concern (see
fpcheck_action.py, the entry point)."""
