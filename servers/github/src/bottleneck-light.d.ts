// Bottleneck ships types for its full build only; the light build (what Octokit's throttling
// plugin loads, without the Redis clustering code) has the same API.
declare module 'bottleneck/light.js' {
  import Bottleneck from 'bottleneck';
  export default Bottleneck;
}
