// Embeds the OpenInstant viewer in a page of your app (docs/VIEWER.md):
//
//   import { embedViewer } from 'https://instant.example.com/viewer/embed.js';
//   const viewer = embedViewer({
//     container: document.getElementById('viewer'),
//     jwt: await myBackend.tokenFor(documentId),
//     onTokenExpired: () => myBackend.tokenFor(documentId),
//   });
//
// The viewer runs in an iframe on the server's origin; the two pages talk only through window
// messages, each checking the other's window and origin.

/**
 * Embeds the viewer.
 * @param {object} options
 * @param {HTMLElement} options.container the element the viewer's iframe fills.
 * @param {string} options.jwt a client token for one layer of one document, from your backend.
 * @param {() => Promise<string>} options.onTokenExpired called when the server refuses the token
 *   (expired or revoked); resolve with a new token from your backend.
 * @param {(state: string, reason: ?string) => void} [options.onStateChange] the sync state:
 *   `clean`, `pending`, `sending`, `receiving`, `offline`, `tokenExpired` or `error`.
 * @param {() => void} [options.onReady] called once the first page is shown.
 * @param {string} [options.serverURL] the OpenInstant server; by default the one this script came from.
 * @param {'auto'|'websocket'|'long-poll'} [options.listen] how the viewer listens for changes.
 * @returns {{iframe: HTMLIFrameElement, setToken: (jwt: string) => void, destroy: () => void}}
 */
export function embedViewer(options) {
  const { container, jwt, onTokenExpired } = options;
  if (!(container instanceof HTMLElement)) throw new TypeError('embedViewer: container must be an element.');
  if (typeof jwt !== 'string' || jwt.split('.').length !== 3) throw new TypeError('embedViewer: jwt must be a JWT.');
  if (typeof onTokenExpired !== 'function') throw new TypeError('embedViewer: onTokenExpired must be a function.');
  const server = new URL(options.serverURL ?? new URL(import.meta.url).origin);
  const fragment = new URLSearchParams({ jwt, parentOrigin: window.location.origin });
  if (options.listen) fragment.set('listen', options.listen);
  const iframe = document.createElement('iframe');
  iframe.src = `${server.origin}/viewer#${fragment}`;
  iframe.title = 'Document viewer';
  iframe.style.width = '100%';
  iframe.style.height = '100%';
  iframe.style.border = '0';
  const send = (message) => iframe.contentWindow?.postMessage(message, server.origin);
  const setToken = (token) => send({ type: 'openinstant:token', jwt: token });
  const receive = async (event) => {
    if (event.source !== iframe.contentWindow || event.origin !== server.origin) return;
    const data = event.data;
    switch (data?.type) {
      case 'openinstant:token-expired':
        try {
          const token = await onTokenExpired();
          if (typeof token === 'string' && token) setToken(token);
        } catch (error) {
          console.error('OpenInstant viewer: onTokenExpired failed', error);
        }
        break;
      case 'openinstant:state':
        options.onStateChange?.(data.state, data.reason ?? null);
        break;
      case 'openinstant:ready':
        options.onReady?.();
        break;
      default:
        break;
    }
  };
  window.addEventListener('message', receive);
  container.append(iframe);
  return {
    iframe,
    setToken,
    destroy() {
      window.removeEventListener('message', receive);
      iframe.remove();
    },
  };
}
