"""A Jupyter kernel kept for several notebooks, which papermill runs one after another on it.

Starting a kernel and importing Polars, matplotlib, seaborn and scipy into it cost seconds of
CPU per notebook; a kept kernel pays that once for every notebook it runs. Before each notebook
the kernel forgets the previous one: its variables, In/Out history and execution counter are
reset and every module's warning registry is emptied, so a notebook sees only the modules
already imported (as if it had imported them itself) and numbers its cells from 1.
"""

from __future__ import annotations

import os
from contextlib import suppress
from pathlib import Path
from typing import Any

import papermill
from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager
from jupyter_core.utils import run_sync
from nbformat import NotebookNode
from papermill.clientwrap import PapermillNotebookClient
from papermill.engines import NBClientEngine, NotebookExecutionManager, papermill_engines

#: Hush ipykernel's log: its TCP warning per kernel, and the "KeyboardInterrupt caught in
#: kernel" error that jupyter_client's shutdown (an interrupt, then the request) makes it log.
#: A notebook's own errors reach the report through the kernel's messages, not this log.
KERNEL_QUIET = "--IPKernelApp.log_level=CRITICAL"
#: Each of ``--jobs`` kernels uses one core, so its BLAS runs on one thread (unless the caller's
#: environment says otherwise): a thread pool per kernel spins against the other kernels and
#: made the leaderboard's bootstrap products 40% slower at paper scale, for the same numbers.
KERNEL_ENV = {"OPENBLAS_NUM_THREADS": "1"}
ENGINE = "arbwb-kept-kernel"  # the papermill engine name under which this module registers
STARTUP_TIMEOUT = 60.0  # seconds for a kernel to answer, as papermill's default

#: Run silently before each notebook after the first. Leaving ``catch_warnings`` marks the
#: filters as changed, which empties every module's registry of warnings already shown.
_FORGET = """\
import warnings
with warnings.catch_warnings():
    pass
get_ipython().reset(new_session=True)
"""


class KeptKernel:
    """One kernel for notebooks run in turn: started on first use, and again after it died.

    Asynchronous like nbclient's own (a blocking client would stall its dead-kernel watch),
    so every call comes from the thread that made the kernel, whose event loop it uses.
    """

    def __init__(self, kernel_name: str, cwd: Path) -> None:
        self.kernel_name = kernel_name
        self.cwd = cwd  # the kernel's working folder (the notebooks' folder)
        self.manager: AsyncKernelManager | None = None
        self.client: AsyncKernelClient | None = None

    def execute(self, notebook: Path, target: Path, parameters: dict[str, Any]) -> None:
        """Run ``notebook`` with ``parameters`` into ``target`` as ``papermill.execute_notebook``
        does (and raising what it raises), on this kernel after it forgot the last notebook."""
        self.start()
        papermill.execute_notebook(
            str(notebook),
            str(target),
            parameters=parameters,
            engine_name=ENGINE,
            kernel_name=self.kernel_name,
            language="python",
            progress_bar=False,
            kept=self,
        )

    def start(self) -> None:
        """A running kernel that forgot its last notebook, or a new one (called before each
        notebook; call it early to start the kernel before the first)."""
        run_sync(self._ready_async)()

    async def _ready_async(self) -> None:
        if self.manager is not None and self.client is not None and await self.manager.is_alive():
            with suppress(TimeoutError):  # a kernel that does not answer is replaced
                reply = await self.client.execute_interactive(
                    _FORGET, silent=True, store_history=False, timeout=STARTUP_TIMEOUT
                )
                if reply["content"]["status"] == "ok":
                    return
        await self._close_async()
        self.manager = AsyncKernelManager(kernel_name=self.kernel_name)
        env = {**KERNEL_ENV, **os.environ}
        await self.manager.start_kernel(extra_arguments=[KERNEL_QUIET], cwd=str(self.cwd), env=env)
        self.client = self.manager.client()
        self.client.start_channels()
        await self.client.wait_for_ready(timeout=STARTUP_TIMEOUT)
        self.client.allow_stdin = False

    def close(self) -> None:
        """Stop the kernel, if one runs: at once, since this process holds everything its
        notebooks produced (a shutdown request waits up to a second for the kernel to exit)."""
        run_sync(self._close_async)()

    async def _close_async(self) -> None:
        if self.client is not None:
            self.client.stop_channels()
        if self.manager is not None and self.manager.has_kernel:
            await self.manager.shutdown_kernel(now=True)
        self.manager = self.client = None


class _KeptKernelEngine(NBClientEngine):  # type: ignore[misc]
    """papermill's nbclient engine, executing on a :class:`KeptKernel` instead of a new kernel."""

    @classmethod
    def execute_managed_notebook(
        cls,
        nb_man: NotebookExecutionManager,
        kernel_name: str,
        *,
        kept: KeptKernel,
        start_timeout: float = STARTUP_TIMEOUT,
        **_: Any,
    ) -> NotebookNode:
        client = PapermillNotebookClient(
            nb_man, km=kept.manager, kernel_name=kernel_name, startup_timeout=start_timeout
        )
        client.kc = kept.client  # a client owning neither the kernel nor this stops neither
        executed: NotebookNode = client.execute()
        return executed


papermill_engines.register(ENGINE, _KeptKernelEngine)
