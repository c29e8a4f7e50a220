import { createServer, Socket, type AddressInfo, type Server } from 'node:net';

/** A TCP forwarder in front of a Postgres server, standing in for the network of one host. */
export interface TcpProxy {
  /** `url` with host and port replaced by the proxy's. */
  readonly url: string;
  /** The network fails: every forwarded connection is cut at both ends and new ones are refused until `restore()`. */
  cut(): void;
  /** New connections are forwarded again. */
  restore(): void;
  /**
   * The host vanishes for good: cut, and the listening socket closed, so the server sees its sessions
   * end and the client can never reconnect.
   */
  sever(): Promise<void>;
}

/** Starts a proxy on 127.0.0.1 forwarding to the host and port of `url`. */
export async function startTcpProxy(url: string): Promise<TcpProxy> {
  const target = new URL(url);
  const sockets = new Set<Socket>();
  let up = true;
  const server: Server = createServer((inbound) => {
    if (!up) {
      inbound.destroy();
      return;
    }
    const outbound = new Socket();
    for (const socket of [inbound, outbound]) {
      sockets.add(socket);
      socket.on('error', () => socket.destroy());
      socket.on('close', () => sockets.delete(socket));
    }
    inbound.on('close', () => outbound.destroy());
    outbound.on('close', () => inbound.destroy());
    outbound.connect(Number(target.port || 5432), target.hostname, () => {
      inbound.pipe(outbound);
      outbound.pipe(inbound);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((server.address() as AddressInfo).port);
  const cut = () => {
    up = false;
    for (const socket of sockets) socket.destroy();
  };
  let severed: Promise<void> | undefined;
  return {
    url: proxied.toString(),
    cut,
    restore() {
      up = true;
    },
    sever() {
      severed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        cut();
      });
      return severed;
    },
  };
}
