/** The app kit (the DOM-free part, for code Node tests run too, is `@suite/shared/app-kit/rpc`): what every suite app shares (host connection, safe DOM building, theme, keyboard). */
export { HostConnection, HostError, APPS_PROTOCOL_VERSION, resultText, type Port, type ToolResult, type HostContext } from './rpc.js';
export { h, append, replace, applyTheme, windowPort, reportSize, arrowNavigation, type Props } from './dom.js';
