"""An actor on another Dask worker, called from a worker.

The engine's coordinating actor (:class:`~dptoolkit.distributed._engine.Coordinator`)
calls the other workers' block actors directly, worker to worker.  A Dask ``Actor`` handle made on a worker
waits, after a connection error, for the actor's task to finish again, and so
never answers when the worker holding the actor died: the coordinator would
hang.  :class:`Peer` sends the message such a handle sends (``actor_execute``)
over the calling worker's own connections and turns a lost worker into
:class:`PeerLostError`, which the client answers by rebuilding the actors and
running the chunk again.
"""

__all__ = ["Peer", "PeerLostError"]


class PeerLostError(RuntimeError):
    """A worker holding blocks could not be reached from the coordinator."""


class Peer:
    """The actor ``key`` on the worker at ``address``."""

    def __init__(self, address, key):
        self.address, self.key = address, key

    async def call(self, function, *args):
        """``actor.function(*args)`` on its worker's event loop; its result.

        Raises
        ------
        PeerLostError
            The worker is unreachable or no longer holds the actor.
        Exception
            The actor's own error, as raised there.
        """
        from distributed import get_worker
        from distributed.protocol import to_serialize

        try:
            reply = await get_worker().rpc(self.address).actor_execute(
                actor=self.key, function=function,
                args=[to_serialize(a) for a in args], kwargs={"separate_thread": False})
        except Exception as exc:   # unreachable, or no such actor there any more
            raise PeerLostError(f"the actor at {self.address}: "
                                f"{type(exc).__name__}: {exc}") from None
        if reply["status"] != "OK":
            raise reply["exception"]
        return reply["result"]
