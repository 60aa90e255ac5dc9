/*  cmake/pure/zmq.h: stands first on the pure cores' include path (wire/,
    gossip/, election/, rebalance/, peer/), so that a core that includes the
    shell's libraries fails to build: the cores do no I/O. */
#error "a pure core includes zmq.h: sockets, threads and clocks belong to node/"
