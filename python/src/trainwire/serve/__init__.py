"""`trainwire serve`: a live dashboard of the runs under directories, with a stop button.

Needs the `serve` extra (Starlette and Uvicorn). The page is built from the TypeScript
package into `static/` and ships in the wheel: no Node, no network at run time.
"""
