/** Human-readable size in the official server's style: "0 B", "512 B", "1.50 KB", "2.00 MB". */
export function formatSize(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  if (bytes <= 0) return '0 B';
  const exponent = Math.min(Math.floor(Math.log(bytes) / Math.log(1024)), units.length - 1);
  if (exponent <= 0) return `${bytes} B`;
  return `${(bytes / 1024 ** exponent).toFixed(2)} ${units[exponent]}`;
}
