/**
 * A TCP proxy in front of a server (PostgreSQL, Redis) that can fail like the real thing:
 * - `cut()` closes every open connection and stops listening, so new connections are refused
 *   (ECONNREFUSED, as with a stopped server); `restore()` listens on the same port again.
 * - `freeze()` keeps every connection open and accepts new ones, but forwards nothing in either
 *   direction (a hung server: the socket is up, no answer ever comes); `thaw()` forwards again,
 *   including what was held back.
 * The app under test connects through it.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface CuttableProxy {
  port: number;
  cut(): void;
  restore(): void;
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

export async function startCuttableProxy(target: { host: string; port: number }): Promise<CuttableProxy> {
  const open = new Set<Socket>();
  const pipes = new Set<{ from: Socket; to: Socket; held: Buffer[] }>();
  let frozen = false;
  const forward = (from: Socket, to: Socket) => {
    const pipe = { from, to, held: [] as Buffer[] };
    pipes.add(pipe);
    from.on('data', (chunk: Buffer) => (frozen ? pipe.held.push(chunk) : to.write(chunk)));
    from.on('close', () => pipes.delete(pipe));
  };
  const server: Server = createServer((client) => {
    const upstream = createConnection(target);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', () => {});
    }
    forward(client, upstream);
    forward(upstream, client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  const listen = (port: number) => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  await listen(0);
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('proxy has no port');
  const port = address.port;
  const stop = () =>
    new Promise<void>((resolve) => {
      if (!server.listening) return resolve();
      server.close(() => resolve());
      for (const socket of open) socket.destroy();
    });
  return {
    port,
    cut: () => void stop(),
    restore: () => void listen(port),
    freeze: () => void (frozen = true),
    thaw: () => {
      frozen = false;
      for (const pipe of pipes) for (const chunk of pipe.held.splice(0)) pipe.to.write(chunk);
    },
    close: stop,
  };
}
