// An IMAP server on loopback that only listens: it greets, answers CAPABILITY, and records every line a client sends
// before it refuses the sign-in. Tests point leadrun at it to prove what a password would have been sent to a server
// it was not saved for; a real server (the private Dovecot) would refuse it without saying what it got.
import { createServer, type Socket } from 'node:net';

export interface CapturingImapServer {
  host: '127.0.0.1';
  port: number;
  /** Every line received, in order, across all connections. */
  lines: string[];
  /** Awaited when a client signs in, before the refusal: a test acts while the client waits for the answer. */
  onSignIn: (() => Promise<void>) | null;
  /** Whether any line carried `secret`, as typed or in the base64 of a SASL PLAIN or LOGIN exchange. */
  heard(secret: string, user?: string): boolean;
  close(): Promise<void>;
}

export async function startCapturingImapServer(): Promise<CapturingImapServer> {
  const lines: string[] = [];
  const refuse = (socket: Socket, tag: string) => {
    const answer = () => socket.write(`${tag} NO [AUTHENTICATIONFAILED] refused\r\n`);
    void (state.onSignIn ?? (async () => {}))().finally(answer);
  };
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.setEncoding('utf8');
    let buffer = '';
    let continuation: string | null = null;
    socket.write('* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] ready\r\n');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      for (let end = buffer.indexOf('\r\n'); end >= 0; end = buffer.indexOf('\r\n')) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        lines.push(line);
        if (continuation !== null) {
          refuse(socket, continuation);
          continuation = null;
          continue;
        }
        const [tag, command = ''] = line.split(' ');
        switch (command.toUpperCase()) {
          case 'CAPABILITY':
            socket.write(`* CAPABILITY IMAP4rev1 AUTH=PLAIN\r\n${tag} OK done\r\n`);
            break;
          case 'AUTHENTICATE':
            if (line.split(' ').length < 4) {
              // Without an initial response the client sends the credentials on the next line.
              continuation = tag ?? '*';
              socket.write('+ \r\n');
            } else {
              refuse(socket, tag ?? '*');
            }
            break;
          case 'LOGIN':
            refuse(socket, tag ?? '*');
            break;
          case 'LOGOUT':
            socket.end(`* BYE\r\n${tag} OK bye\r\n`);
            break;
          default:
            socket.write(`${tag} BAD not here\r\n`);
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  const state: CapturingImapServer = {
    host: '127.0.0.1',
    port: typeof address === 'object' && address ? address.port : 0,
    lines,
    onSignIn: null,
    heard(secret, user = '') {
      const base64 = (text: string) => Buffer.from(text).toString('base64');
      const forms = [secret, base64(secret), base64(`\0${user}\0${secret}`)];
      return lines.some((line) => forms.some((form) => line.includes(form)));
    },
    close: () => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }),
  };
  return state;
}
